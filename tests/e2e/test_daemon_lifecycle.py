"""Starting and stopping the daemon: one per port, a clean Ctrl-C, a clear stop on a bad ceiling."""

import re
import signal

import pytest

from tests.support.daemon import free_port, running_daemon
from tests.support.installation import Installation
from theurian.access_token import TOKEN_NAME
from theurian.daemon_address import DEFAULT_HOST
from theurian.daemon_state import RECORD_NAME
from theurian.errors import EXIT_FAILED, EXIT_USAGE

TIMESTAMPED = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{4} ")  # serve.log_lines.TIME_FORMAT


def test_a_second_daemon_on_the_same_port_exits_at_once_with_a_clear_message(installation: Installation) -> None:
    with running_daemon(installation) as first:
        second = installation.cli("serve", "--port", str(first.port), timeout=30)
        assert second.returncode == EXIT_FAILED
        line, = second.stderr.splitlines()  # its log: one record, with its timestamp
        assert TIMESTAMPED.match(line), line
        assert line.endswith(f" ERROR theurian daemon did not start: 127.0.0.1:{first.port} is already in use "
                             "(another `theurian serve`?); stop it or pass --port")
        assert first.process.poll() is None  # the first one is untouched


def test_a_damaged_token_stops_the_daemon_at_start_up_with_one_timestamped_record(installation: Installation) -> None:
    installation.cli_in_process("auth", "token")
    (installation.state_dir / TOKEN_NAME).write_text("short\n", encoding="ascii")
    result = installation.cli("serve", "--port", str(free_port()), timeout=30)
    assert result.returncode == EXIT_FAILED
    line, = result.stderr.splitlines()
    assert TIMESTAMPED.match(line) and " ERROR theurian daemon did not start: " in line, line
    assert line.endswith("is damaged; `theurian auth rotate` writes a new one"), line


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["Ctrl-C", "a service manager's SIGTERM"])
def test_ctrl_c_or_sigterm_stops_the_daemon_cleanly(installation: Installation, stop: signal.Signals) -> None:
    """SIGTERM killed the process (143) after uvicorn's graceful shutdown, before it said it had stopped."""
    with running_daemon(installation) as daemon:
        daemon.process.send_signal(stop)
        assert daemon.process.wait(timeout=15) == 0
        log = daemon.log()
    assert "theurian daemon stopped" in log
    assert "Traceback" not in log


def test_an_unknown_disclosure_ceiling_stops_serve_at_start_up(installation: Installation) -> None:
    config = installation.home / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('disclosure_ceiling = "top-secret"\n', encoding="utf-8")
    result = installation.cli("serve", "--port", str(free_port()), timeout=30)
    assert result.returncode == EXIT_FAILED
    assert "disclosure_ceiling 'top-secret' is not one of public, internal, confidential, restricted" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", [["serve"], ["daemon", "start"], ["daemon", "start", "--foreground"]],
                         ids=["serve", "daemon start", "daemon start --foreground"])
@pytest.mark.parametrize("host", ["", "  "], ids=["empty", "blank"])
def test_an_empty_or_blank_host_is_refused_rather_than_listening_on_every_interface(
        installation: Installation, command: list[str], host: str) -> None:
    """The socket layer reads an empty host as 0.0.0.0: every interface, announced as `http://:PORT/mcp`."""
    result = installation.cli(*command, "--host", host, "--port", str(free_port()), timeout=30)
    assert result.returncode == EXIT_USAGE
    assert result.stderr.splitlines() == [
        f"theurian: --host {host!r} names no address; leave it out for {DEFAULT_HOST} (loopback), or name one"]
    assert not (installation.state_dir / RECORD_NAME).exists()
