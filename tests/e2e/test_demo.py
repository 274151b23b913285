"""`make demo`'s script end to end (installation aside, which `make` does first): every stage through the real CLI
on bundled data, then a real MCP client's answers from the daemon it started."""

import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from tests.support.daemon import free_port
from tests.support.demo_build import run_demo, shared_demo


def _demo(tmp_path: Path, port: int) -> subprocess.CompletedProcess[str]:
    return run_demo(tmp_path / "demo", port)


def test_the_demo_builds_every_store_from_bundled_data_and_a_real_client_gets_answers(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    demo = shared_demo(tmp_path_factory)  # the session's one run, which test_doctor.py copies too
    output = demo.output
    assert demo.returncode == 0, output
    assert "Acme/Widgets: completed — 105 pull requests" in output
    assert "> review.search" in output and "slow reads hold it" in output
    # A situation sharing no word with the thread it finds (fixtures/similar t088).
    assert "> review.findSimilar" in output and "app/controllers/application_controller.rb" in output
    assert "'Rendering exception.backtrace to the visitor" in output
    assert "> review.findings" in output and "count 2" in output
    assert "> knowledge.search" in output and "refused" not in output
    assert '"reviewIngestion": true' in output
    assert "theurian daemon stopped" in output  # the script stopped the daemon it started
    # Every setup line it prints reaches the demo's installation and port, never the operator's own (the
    # VS Code line once named neither: run as shown, it minted a token in the real home for port 7419).
    home = str(demo.folder / "installation")
    setup_lines = [line for line in output.splitlines() if "setup --client" in line]
    assert setup_lines and all(f"THEURIAN_HOME={home}" in line and "--port" in line for line in setup_lines), output
    assert "as --port says" not in output  # setup's note for a person typing it is not the demo's output
    state = demo.folder / "sample-project/.theurian/state"
    assert (state / "review-store.duckdb").is_file() and (state / "theurian-findings-local.sqlite").is_file()


class _Healthy(BaseHTTPRequestHandler):
    """Another server already on the port, answering /health as a daemon would."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_demo_whose_port_is_already_answered_stops_rather_than_print_another_daemons_answers(
        tmp_path: Path) -> None:
    server = HTTPServer(("127.0.0.1", 0), _Healthy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = _demo(tmp_path, server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 1
    assert f"something already answers on 127.0.0.1:{server.server_address[1]}" in result.stderr
    assert "> review.search" not in result.stdout and "is served at" not in result.stdout
    assert "== " not in result.stdout  # found out before any building


def test_a_demo_folder_that_is_not_empty_and_not_a_demo_is_refused_untouched(tmp_path: Path) -> None:
    """The demo replaces its folder whole: pointed at someone's folder, it deleted what was there."""
    theirs = tmp_path / "demo"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("precious", encoding="utf-8")
    result = _demo(tmp_path, free_port())
    assert result.returncode == 1
    assert "is not empty and is not a demo folder this script made; nothing was removed" in result.stderr
    assert sorted(p.name for p in theirs.iterdir()) == ["notes.txt"]


def test_a_folder_holding_a_sample_project_is_still_not_a_demo_folder(tmp_path: Path) -> None:
    """`THEURIAN_DEMO_DIR=fixtures` matched the old "made before the mark" test and removed the checkout's fixtures."""
    theirs = tmp_path / "demo"
    (theirs / "sample-project/.theurian").mkdir(parents=True)
    (theirs / "notes.txt").write_text("precious", encoding="utf-8")
    result = _demo(tmp_path, free_port())
    assert result.returncode == 1 and "nothing was removed" in result.stderr
    assert (theirs / "notes.txt").read_text(encoding="utf-8") == "precious"
