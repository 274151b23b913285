"""The installation's own files (its config and the project registry) read through the real CLI, bounded and
never blocking: a FIFO, a link to /dev/zero or a file past its bound there gets one line naming it, from every
command and from `daemon start`, where each used to hold the command (and the daemon) for good or be read whole."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.daemon import free_port, managed_start
from tests.support.installation import Installation
from theurian.files import MAX_CONFIG_FILE_BYTES
from theurian.installation import INSTALLATION_CONFIG_NAME, REGISTRY_NAME
from theurian.registry import MAX_REGISTRY_FILE_BYTES

# A bounded wait on every command: one that blocks on a FIFO fails the test instead of hanging it.
WAIT_SECONDS = 60


def _fifo(path: Path) -> str:
    os.mkfifo(path)
    return "cannot be read: not a regular file"


def _dev_zero(path: Path) -> str:
    path.symlink_to("/dev/zero")
    return "cannot be read: not a regular file"


def _past(bound: int) -> Callable[[Path], str]:
    def grow(path: Path) -> str:
        path.write_bytes(b"#" * (bound + 1))  # a comment: valid TOML, refused for its size alone
        return f"cannot be read: larger than {bound} bytes, not read"
    return grow


PLANTED = {"a FIFO": _fifo, "a link to /dev/zero": _dev_zero}


def _plant(installation: Installation, name: str, plant: Callable[[Path], str]) -> tuple[Path, str]:
    path = installation.home / "config" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return path, plant(path)


@pytest.mark.parametrize("planted", [*PLANTED, "one byte past the bound"])
def test_the_project_registry_that_cannot_be_read_whole_is_one_line_from_project_list(
        installation: Installation, planted: str) -> None:
    path, reason = _plant(installation, REGISTRY_NAME, PLANTED.get(planted) or _past(MAX_REGISTRY_FILE_BYTES))
    result = installation.cli("project", "list", timeout=WAIT_SECONDS)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == f"theurian: the project registry {path} {reason}\n"


def test_a_project_registry_at_its_bound_is_read(installation: Installation) -> None:
    path = installation.home / "config" / REGISTRY_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"#" * MAX_REGISTRY_FILE_BYTES)
    result = installation.cli("project", "list", timeout=WAIT_SECONDS)
    assert result.returncode == 0 and result.stdout.startswith("no projects registered"), result.stderr


@pytest.mark.parametrize("planted", [*PLANTED, "one byte past the bound"])
def test_an_installation_config_that_cannot_be_read_whole_stops_the_daemon_start_in_one_line(
        installation: Installation, planted: str) -> None:
    path, reason = _plant(installation, INSTALLATION_CONFIG_NAME, PLANTED.get(planted) or _past(MAX_CONFIG_FILE_BYTES))
    result = installation.cli("daemon", "start", "--port", str(free_port()), timeout=WAIT_SECONDS)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == f"theurian: the daemon exited (1) before it answered: {path} {reason}\n"
    assert installation.cli("daemon", "status", timeout=WAIT_SECONDS).returncode == 3  # nothing left running


@pytest.mark.parametrize("planted", [*PLANTED, "one byte past the bound"])
def test_doctor_names_an_installation_file_that_cannot_be_read_whole_on_its_own_row(
        installation: Installation, planted: str) -> None:
    for name, bound, row in ((INSTALLATION_CONFIG_NAME, MAX_CONFIG_FILE_BYTES, "installation config"),
                             (REGISTRY_NAME, MAX_REGISTRY_FILE_BYTES, "project registry")):
        path, reason = _plant(installation, name, PLANTED.get(planted) or _past(bound))
        result = installation.cli("doctor", timeout=WAIT_SECONDS)
        # The row named `row` (after its 4-character level and two spaces), not the rows naming it as their cause.
        [line] = [line for line in result.stdout.splitlines() if line[6:].startswith(f"{row} ")]
        assert result.returncode == 1 and line.startswith("FAIL") and f"{path} {reason}" in line, result.stdout
        path.unlink()


def test_an_installation_config_at_its_bound_is_read(installation: Installation) -> None:
    path = installation.home / "config" / INSTALLATION_CONFIG_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"#" * MAX_CONFIG_FILE_BYTES)
    result = installation.cli("doctor", timeout=WAIT_SECONDS)
    [line] = [line for line in result.stdout.splitlines() if " installation config " in line]
    assert line.split()[0] == "ok" and "disclosure ceiling internal" in line, result.stdout


@pytest.mark.parametrize("planted", list(PLANTED))
def test_a_token_file_that_is_no_regular_file_is_one_line_from_auth_token_and_never_waited_on(
        installation: Installation, planted: str) -> None:
    path = installation.home / "state" / "mcp-token"
    path.parent.mkdir(parents=True, exist_ok=True)
    PLANTED[planted](path)
    result = installation.cli("auth", "token", timeout=WAIT_SECONDS)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (f"theurian: cannot read the access token {path}: not a regular file; "
                             "`theurian auth rotate` writes a new one\n")


@pytest.mark.parametrize("planted", list(PLANTED))
def test_a_daemon_record_that_is_no_regular_file_reads_as_no_daemon(installation: Installation,
                                                                     planted: str) -> None:
    path = installation.home / "state" / "daemon.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    PLANTED[planted](path)
    result = installation.cli("daemon", "status", timeout=WAIT_SECONDS)
    assert "Traceback" not in result.stderr and "not running" in result.stdout + result.stderr


START_COMMANDS = {"background": ("daemon", "start"), "foreground": ("daemon", "start", "--foreground"),
                  "serve": ("serve",)}


@pytest.mark.parametrize("start", list(START_COMMANDS))
@pytest.mark.parametrize("planted", [*PLANTED, "one byte past the bound"])
def test_a_project_registry_that_cannot_be_read_whole_stops_the_daemon_start_in_one_line(
        installation: Installation, planted: str, start: str) -> None:
    path, reason = _plant(installation, REGISTRY_NAME, PLANTED.get(planted) or _past(MAX_REGISTRY_FILE_BYTES))
    result = installation.cli(*START_COMMANDS[start], "--port", str(free_port()), timeout=WAIT_SECONDS)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (f"theurian: the daemon was not started: the project registry {path} {reason}; replace "
                             "it with the registry file (removing it leaves no project registered)\n")
    path.unlink()
    assert installation.cli("daemon", "status", timeout=WAIT_SECONDS).returncode == 3  # nothing was started


def test_a_project_registry_at_its_bound_lets_the_daemon_start(installation: Installation) -> None:
    path = installation.home / "config" / REGISTRY_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"#" * MAX_REGISTRY_FILE_BYTES)
    started, _ = managed_start(installation, timeout=WAIT_SECONDS)
    try:
        assert started.returncode == 0, started.stderr
        assert installation.cli("daemon", "status", timeout=WAIT_SECONDS).returncode == 0
    finally:
        installation.cli("daemon", "stop", timeout=WAIT_SECONDS)
