"""`theurian daemon start | stop | status | logs` through the real CLI, on a free port, in an isolated installation."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import IO

import httpx
import pytest

from tests.support.daemon import forget, free_port, managed_start, remember, running_daemon
from tests.support.installation import THEURIAN_BIN, Installation
from tests.support.mcp_client import call_tool
from theurian.daemon_control import STATUS_RUNNING, STATUS_STOPPED, STATUS_UNHEALTHY
from theurian.daemon_state import LOG_NAME, RECORD_NAME, alive
from theurian.errors import EXIT_ALREADY_IN_PLACE, EXIT_FAILED


def _record(installation: Installation) -> dict:
    return json.loads((installation.state_dir / RECORD_NAME).read_text(encoding="utf-8"))


@pytest.fixture
def started(installation: Installation) -> Iterator[int]:
    """A daemon started with `theurian daemon start` (background); always stopped afterwards."""
    result, port = managed_start(installation)
    assert result.returncode == 0, result.stderr
    remember(port, installation)
    try:
        yield port
    finally:
        forget(port)
        if (installation.state_dir / RECORD_NAME).exists():
            pid = _record(installation)["pid"]
            installation.cli("daemon", "stop", timeout=60)
            try:
                os.kill(pid, signal.SIGKILL)  # only if the stop under test left it running
            except ProcessLookupError:
                pass


def test_start_returns_once_the_daemon_answers_and_status_reports_it(installation: Installation,
                                                                     started: int) -> None:
    record = _record(installation)
    assert httpx.get(f"http://127.0.0.1:{started}/health", timeout=5).status_code == 200
    status = installation.cli("daemon", "status", "--json")
    assert status.returncode == STATUS_RUNNING, status.stderr
    document = json.loads(status.stdout)["summary"]
    assert document["state"] == "running" and document["pid"] == record["pid"]
    assert document["url"] == f"http://127.0.0.1:{started}/mcp"
    assert document["version"] and document["uptimeSeconds"] >= 0 and document["projects"] == []
    text = installation.cli("daemon", "status").stdout
    assert f"pid       {record['pid']}" in text and "uptime" in text
    # It serves: a real client with the installation's token gets an answer.
    assert not call_tool(f"http://127.0.0.1:{started}/mcp", "system.capabilities", {}).is_error


def test_a_second_start_is_refused_naming_the_running_daemons_pid(installation: Installation, started: int) -> None:
    pid = _record(installation)["pid"]
    for args in (["--port", str(started)], ["--port", str(free_port())], ["--foreground", "--port", str(started)]):
        second = installation.cli("daemon", "start", *args, timeout=60)
        assert second.returncode == EXIT_ALREADY_IN_PLACE
        assert second.stderr.strip() == (f"theurian: a theurian daemon is already running: pid {pid} at "
                                         f"http://127.0.0.1:{started}/mcp; `theurian daemon stop` stops it")
    assert _record(installation)["pid"] == pid


def test_stop_ends_the_daemon_gracefully_and_status_then_says_not_running(installation: Installation,
                                                                          started: int) -> None:
    pid = _record(installation)["pid"]
    stopped = installation.cli("daemon", "stop", timeout=60)
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.stdout.startswith(f"theurian daemon stopped (pid {pid}, ")
    assert not (installation.state_dir / RECORD_NAME).exists()
    assert not alive(pid)  # gone (a zombie until whoever adopted it reaps it)
    status = installation.cli("daemon", "status")
    assert status.returncode == STATUS_STOPPED
    assert "not running" in status.stdout
    assert installation.cli("daemon", "stop").returncode == EXIT_ALREADY_IN_PLACE
    log = installation.cli("daemon", "logs").stdout
    assert "theurian serving MCP" in log and "theurian daemon stopped" in log


def test_logs_show_each_call_but_never_the_token(installation: Installation, started: int) -> None:
    call_tool(f"http://127.0.0.1:{started}/mcp", "project.list", {})
    log = installation.cli("daemon", "logs", "-n", "50").stdout
    assert "tool=project.list project=- outcome=ok" in log
    assert installation.token() not in (installation.state_dir / LOG_NAME).read_text(encoding="utf-8")


def test_start_on_a_port_something_else_holds_fails_with_the_daemons_own_words(installation: Installation) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = installation.cli("daemon", "start", "--port", str(port), timeout=60)
    assert result.returncode == EXIT_FAILED
    assert result.stderr.splitlines() == [
        f"theurian: the daemon exited (1) before it answered: 127.0.0.1:{port} is already in use (another "
        "`theurian serve`?); stop it or pass --port"]
    assert not (installation.state_dir / RECORD_NAME).exists()
    log = (installation.state_dir / LOG_NAME).read_text(encoding="utf-8").splitlines()
    assert log and all(re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{4} ", line) for line in log), log


def _first_child(pid: int, deadline: float) -> int:
    """The pid of the first process `pid` started (Linux's /proc lists a thread's children)."""
    children = f"/proc/{pid}/task/{pid}/children"
    while time.monotonic() < deadline:
        with open(children, encoding="ascii") as listed:
            found = listed.read().split()
        if found:
            return int(found[0])
        time.sleep(0.005)  # polling for a fork: nothing to wait on
    raise AssertionError(f"pid {pid} started no process")


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)],
                         ids=["Ctrl-C", "SIGTERM"])
def test_a_start_interrupted_before_the_daemon_answers_stops_the_daemon_it_started(
        installation: Installation, stop: signal.Signals, code: int) -> None:
    """The daemon runs in a session of its own, so the terminal's Ctrl-C never reaches it: the start stops it."""
    port = free_port()
    with subprocess.Popen([str(THEURIAN_BIN), "daemon", "start", "--port", str(port)], env=installation.env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as starting:
        try:
            child = _first_child(starting.pid, time.monotonic() + 30)
            starting.send_signal(stop)  # the daemon takes a second to import its libraries: it has not answered
            assert starting.wait(timeout=60) == code
        finally:
            starting.kill()
    deadline = time.monotonic() + 20
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)  # the child is not ours to wait on: it is the start's
    left_running = alive(child)
    if left_running:
        os.kill(child, signal.SIGKILL)  # failing, leave no daemon behind
    assert not left_running
    assert installation.cli("daemon", "status").returncode == STATUS_STOPPED
    assert not (installation.state_dir / RECORD_NAME).exists()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))  # nothing holds the port


_STUBBORN = "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); " \
            "time.sleep(120)"


def test_stop_is_bounded_a_daemon_ignoring_sigterm_is_killed_after_the_timeout(installation: Installation) -> None:
    """A process that ignores SIGTERM (a daemon stuck in a call) is killed once --timeout has passed."""
    with subprocess.Popen([sys.executable, "-c", _STUBBORN, "theurian"], stdout=subprocess.PIPE,
                          text=True) as stubborn:
        try:
            assert stubborn.stdout is not None and stubborn.stdout.readline() == "up\n"  # SIGTERM is ignored now
            installation.state_dir.mkdir(parents=True)
            (installation.state_dir / RECORD_NAME).write_text(json.dumps({
                "pid": stubborn.pid, "host": "127.0.0.1", "port": free_port(),
                "startedAt": "2026-12-01T00:00:00+00:00", "version": "0"}), encoding="utf-8")
            assert installation.cli("daemon", "status").returncode == STATUS_UNHEALTHY  # alive, not answering
            result = installation.cli("daemon", "stop", "--timeout", "1", timeout=60)
            assert stubborn.wait(timeout=10) == -signal.SIGKILL
        finally:
            stubborn.kill()
    assert result.returncode == EXIT_FAILED
    assert result.stderr.strip() == (f"theurian daemon (pid {stubborn.pid}) did not stop within 1 s: killed it "
                                     "(calls in flight were cut off)")
    assert not (installation.state_dir / RECORD_NAME).exists()


def test_a_record_left_by_a_dead_daemon_is_reported_and_does_not_block_a_start(installation: Installation) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass", "theurian"])
    gone.wait()
    installation.state_dir.mkdir(parents=True)
    (installation.state_dir / RECORD_NAME).write_text(json.dumps({
        "pid": gone.pid, "host": "127.0.0.1", "port": 1, "startedAt": "2026-12-01T00:00:00+00:00", "version": "0"}),
        encoding="utf-8")
    status = installation.cli("daemon", "status")
    assert status.returncode == STATUS_UNHEALTHY
    assert f"dead (pid {gone.pid} is gone; `theurian daemon start` starts a new one)" in status.stdout
    try:
        started, port = managed_start(installation)
        assert started.returncode == 0, started.stderr
        assert _record(installation)["port"] == port
    finally:
        installation.cli("daemon", "stop", timeout=60)


def test_a_foreground_serve_is_seen_by_status_and_refuses_a_background_start(installation: Installation) -> None:
    with running_daemon(installation) as daemon:
        status = json.loads(installation.cli("daemon", "status", "--json").stdout)["summary"]
        assert status["state"] == "running" and status["pid"] == daemon.process.pid
        refused = installation.cli("daemon", "start", "--port", str(free_port()), timeout=60)
        assert refused.returncode == EXIT_ALREADY_IN_PLACE and f"pid {daemon.process.pid}" in refused.stderr
        # It logs to its terminal: "no daemon log yet" read as if none ran.
        assert installation.cli("daemon", "logs").stdout == (
            f"the running daemon (pid {daemon.process.pid}) writes no log file: it serves in the foreground "
            f"(`theurian serve`) and logs to its terminal; `theurian daemon start` writes "
            f"{installation.state_dir / LOG_NAME}\n")
        # A second `serve` on another port still serves, but leaves the first one's record alone.
        with running_daemon(installation) as second:
            assert _record(installation)["pid"] == daemon.process.pid
            assert "another theurian daemon of this installation is running" in second.log()
        assert _record(installation)["pid"] == daemon.process.pid
    assert not (installation.state_dir / RECORD_NAME).exists()


def _read_until(stream: IO[bytes], wanted: bytes, deadline: float) -> bytes:
    seen = b""
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                break
            seen += chunk
    return seen


def test_logs_follow_prints_new_lines_as_the_daemon_writes_them(installation: Installation, started: int) -> None:
    with subprocess.Popen([str(THEURIAN_BIN), "daemon", "logs", "-f", "-n", "1"], env=installation.env,
                          stdout=subprocess.PIPE) as follower:
        assert follower.stdout is not None
        try:
            # -n 1: the log's last line first, which says the follower has read to the end and is following.
            first = _read_until(follower.stdout, b"\n", time.monotonic() + 30)
            call_tool(f"http://127.0.0.1:{started}/mcp", "system.capabilities", {})
            later = _read_until(follower.stdout, b"tool=system.capabilities", time.monotonic() + 30)
        finally:
            follower.send_signal(signal.SIGINT)
            follower.wait(timeout=15)
    assert first.count(b"\n") == 1 and b"Authorization: Bearer" in first  # the daemon's last start-up line
    assert b"tool=system.capabilities project=- outcome=ok" in later


def test_setup_client_connects_to_the_running_daemons_address_and_says_so(installation: Installation,
                                                                          started: int) -> None:
    result = installation.cli("setup", "--client", "claude-code")
    assert result.returncode == 0, result.stderr
    url = f"http://127.0.0.1:{started}/mcp"
    assert f" {url} " in result.stdout and ":7419" not in result.stdout
    assert result.stderr.splitlines() == [
        f"theurian: {url} is the address of the daemon running now (pid {_record(installation)['pid']})"]
    as_json = json.loads(installation.cli("setup", "--client", "inspector", "--json").stdout)["summary"]
    assert (as_json["mcpUrl"], as_json["addressFrom"]) == (url, "running-daemon")
    chosen = installation.cli("setup", "--client", "claude-code", "--port", "5555")
    assert " http://127.0.0.1:5555/mcp " in chosen.stdout
    assert chosen.stderr.splitlines() == ["theurian: http://127.0.0.1:5555/mcp is port 5555, as --port says"]


def test_setup_client_refuses_to_undo_a_token_deleted_while_the_daemon_runs(installation: Installation,
                                                                           started: int) -> None:
    token = installation.state_dir / "mcp-token"
    token.unlink()  # a revocation in force: the daemon accepts no token (docs/daemon.md)
    for words in (["setup", "--client", "claude-code"], ["setup", "--client", "cursor", "--port", "5555"]):
        refused = installation.cli(*words)
        assert refused.returncode == 1 and refused.stdout == "", refused.stderr
        assert "`theurian auth rotate` writes a new one" in refused.stderr.splitlines()[-1]
    assert not token.exists()
    installation.cli("auth", "rotate", check=True)
    assert installation.cli("setup", "--client", "claude-code").returncode == 0


def test_setup_client_with_no_daemon_running_gives_the_default_address_and_says_so(
        installation: Installation) -> None:
    result = installation.cli("setup", "--client", "claude-code")
    assert result.returncode == 0, result.stderr
    assert " http://127.0.0.1:7419/mcp " in result.stdout
    assert result.stderr.splitlines() == [
        "theurian: http://127.0.0.1:7419/mcp is the default address: no daemon is running (`theurian daemon "
        "start` serves on port 7419)"]
