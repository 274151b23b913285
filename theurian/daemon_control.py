"""Starting, stopping and asking after the installation's daemon from another process (`theurian daemon …`).

A background start launches `theurian daemon start --foreground` detached (its own session, its output appended
to the installation's daemon log) and returns once that very process has written its record and answers
`/health`. A stop sends SIGTERM (the daemon finishes in-flight calls and exits), waits a bounded time, then
SIGKILLs. One daemon per installation: a start while one runs is refused with its pid and address.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from theurian import access_token, daemon_state
from theurian.daemon_state import DaemonRecord
from theurian.errors import AlreadyInPlaceError, TheurianError
from theurian.interrupts import watching_interrupts

START_TIMEOUT_SECONDS: Final = 30.0
STOP_TIMEOUT_SECONDS: Final = 10.0
_KILL_WAIT_SECONDS: Final = 5.0
_POLL_SECONDS: Final = 0.05
# How the daemon's log record of a start-up failure begins, after its timestamp and level (serve.daemon writes it):
# `daemon start` reports the reason that follows as the child's own words.
START_FAILURE: Final = "theurian daemon did not start: "

# `theurian daemon status` exit codes, as LSB init scripts report status: 0 running, 1 a daemon is recorded but
# dead or not answering, 3 not running.
STATUS_RUNNING: Final = 0
STATUS_UNHEALTHY: Final = 1
STATUS_STOPPED: Final = 3


@dataclass(frozen=True)
class Stopped:
    record: DaemonRecord
    seconds: float
    killed: bool  # it outlived the bound and was killed: in-flight calls were cut off


@dataclass(frozen=True)
class Status:
    state: str  # "running", "not answering", "dead" (a record whose process is gone), "stopped"
    record: DaemonRecord | None
    health: dict[str, Any] | None

    @property
    def exit_code(self) -> int:
        if self.state == "running":
            return STATUS_RUNNING
        return STATUS_STOPPED if self.state == "stopped" else STATUS_UNHEALTHY


def running() -> DaemonRecord | None:
    """The record of a live daemon of this installation, or None."""
    record = daemon_state.read_record()
    if record is None or not daemon_state.alive(record.pid) or not daemon_state.looks_like_theurian(record.pid):
        return None
    return record


def refuse_if_running() -> None:
    """Raises AlreadyInPlaceError naming the pid and address of the daemon already running, if one is."""
    record = running()
    if record is not None:
        raise AlreadyInPlaceError(f"a theurian daemon is already running: pid {record.pid} at {record.mcp_url}; "
                                  "`theurian daemon stop` stops it")


def start_background(host: str, port: int, timeout: float = START_TIMEOUT_SECONDS) -> DaemonRecord:
    """Start the daemon detached and return its record once it answers /health.

    Raises:
        AlreadyInPlaceError: a daemon of this installation is running.
        TheurianError: it exited before answering (its own words, from the log, say why) or never answered.
    """
    refuse_if_running()
    access_token.current_token()  # a damaged token is reported here, in this terminal, not only in the log
    log_path = daemon_state.log_path()
    log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    daemon_state.rotate_log_if_large()
    with watching_interrupts() as interrupts:
        with interrupts.deferred(), open(log_path, "ab") as log:  # a Ctrl-C here lands once `child` is known
            offset = log.tell()
            command = [sys.executable, "-m", "theurian", "daemon", "start", "--foreground", "--host", host,
                       "--port", str(port)]
            child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     start_new_session=True, close_fds=True)
        try:
            interrupts.check()
            return _answering(child, offset, timeout, log_path)
        except KeyboardInterrupt:
            # The child is in a session of its own, so the terminal's Ctrl-C never reached it: an operator who gave
            # up on the start would otherwise leave a daemon holding the port, with nothing said.
            with interrupts.deferred():
                _stop_child(child)
            raise


def _answering(child: subprocess.Popen[bytes], offset: int, timeout: float, log_path: Path) -> DaemonRecord:
    """`child`'s record once it answers /health, within `timeout` seconds; killed past them.

    Raises:
        TheurianError: it exited before answering, or never answered.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = child.poll()
        if code is not None:
            raise TheurianError(f"the daemon exited ({code}) before it answered: {_last_words(offset)}")
        record = daemon_state.read_record()
        if record is not None and record.pid == child.pid and daemon_state.health(record.base_url):
            return record
        time.sleep(_POLL_SECONDS)  # polling for start-up, bounded by the deadline
    child.kill()
    child.wait()
    raise TheurianError(f"the daemon did not answer /health within {timeout:g} s and was stopped; see {log_path}")


def _stop_child(child: subprocess.Popen[bytes]) -> None:
    """Stop a daemon this command started, as `stop` would: SIGTERM, then SIGKILL past the stop timeout; its record
    goes with it."""
    child.terminate()
    try:
        child.wait(STOP_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    daemon_state.remove_record(child.pid)  # a graceful daemon removed it itself; a killed one could not


def stop(timeout: float = STOP_TIMEOUT_SECONDS) -> Stopped:
    """SIGTERM the daemon, wait up to `timeout` seconds for it to exit, then SIGKILL it.

    Raises:
        AlreadyInPlaceError: no daemon of this installation is running (a stale record is removed).
    """
    record = daemon_state.read_record()
    if record is None:
        raise AlreadyInPlaceError("no theurian daemon is running")
    if not daemon_state.alive(record.pid) or not daemon_state.looks_like_theurian(record.pid):
        daemon_state.remove_stale_record()
        raise AlreadyInPlaceError(f"no theurian daemon is running (the record of pid {record.pid}, which is gone, "
                                  "was removed)")
    started = time.monotonic()
    os.kill(record.pid, signal.SIGTERM)
    killed = not _wait_gone(record.pid, timeout)
    if killed:
        os.kill(record.pid, signal.SIGKILL)
        _wait_gone(record.pid, _KILL_WAIT_SECONDS)
    daemon_state.remove_record(record.pid)  # a graceful daemon removed it itself; a killed one could not
    return Stopped(record, time.monotonic() - started, killed)


def status() -> Status:
    record = daemon_state.read_record()
    if record is None:
        return Status("stopped", None, None)
    if not daemon_state.alive(record.pid) or not daemon_state.looks_like_theurian(record.pid):
        return Status("dead", record, None)
    answer = daemon_state.health(record.base_url)
    return Status("running" if answer else "not answering", record, answer)


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while daemon_state.alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_SECONDS)  # a process that is not our child can only be polled
    return True


def _last_words(offset: int) -> str:
    """The last line the failed daemon wrote to the log (its one-line reason), or where to look."""
    path = daemon_state.log_path()
    try:
        with open(path, "rb") as log:
            log.seek(offset)
            lines = log.read().decode("utf-8", errors="replace").strip().splitlines()
    except OSError:
        lines = []
    if not lines:
        return f"see {path}"
    _, found, reason = lines[-1].partition(START_FAILURE)  # after the record's timestamp and level
    return reason if found else lines[-1].removeprefix("theurian: ")
