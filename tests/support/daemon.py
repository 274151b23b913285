"""A real daemon: `theurian serve` in a subprocess on a free loopback port, torn down after use.

Every daemon started here is remembered by its address, so the MCP clients of `tests.support` (`mcp_client`,
`mcp_session`, `inspector`) send its installation's bearer token without a test having to pass it: a test that
talks to `daemon.mcp_url` through them is authorised, and one that speaks raw HTTP uses `daemon.mcp_headers`.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from tests.support.installation import THEURIAN_BIN, Installation

START_TIMEOUT_SECONDS = 30.0
# Between picking a free port and the daemon binding it, a parallel test worker can take it; pick again.
PORT_ATTEMPTS = 3
# Accept and Content-Type as a Streamable HTTP client sends them; `RunningDaemon.mcp_headers` adds the token.
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

# Installations of the daemons running now (or started by `theurian daemon start` in a test), by "host:port".
_INSTALLATIONS: dict[str, Installation] = {}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def remember(port: int, installation: Installation) -> None:
    """Let the support clients authorise calls to the daemon on `port` with `installation`'s token."""
    _INSTALLATIONS[f"127.0.0.1:{port}"] = installation


def forget(port: int) -> None:
    _INSTALLATIONS.pop(f"127.0.0.1:{port}", None)


def token_for(url: str) -> str | None:
    """The current token of the installation whose daemon answers at `url` (re-read each time, so a rotation is
    followed as a configured client would); None for an address no daemon of the tests' was started on."""
    installation = _INSTALLATIONS.get(urlsplit(url).netloc)
    return installation.token() if installation is not None else None


def bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


@dataclass
class RunningDaemon:
    process: subprocess.Popen[str]
    port: int
    log_path: Path
    installation: Installation

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/mcp"

    @property
    def compat_url(self) -> str:
        """The route serving the same tools under underscore names (serve.compat)."""
        return f"{self.base_url}/mcp/compat"

    @property
    def token(self) -> str:
        return self.installation.token()

    @property
    def mcp_headers(self) -> dict[str, str]:
        """What a raw HTTP client sends to /mcp: Accept, Content-Type and the bearer token."""
        return MCP_HEADERS | bearer(self.token)

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8")

    def log_once_it_holds(self, text: str, timeout: float = 10.0) -> str:
        """The log, as soon as it holds `text` (a line is written after the answer it describes is sent)."""
        deadline = time.monotonic() + timeout
        while text not in (log := self.log()) and time.monotonic() < deadline:
            time.sleep(0.05)  # polling the log file, bounded by the deadline
        return log


class _PortTaken(Exception):  # noqa: N818 - an internal signal: try another port
    pass


@contextmanager
def running_daemon(
    installation: Installation, *, port: int | None = None, binary: Path = THEURIAN_BIN, cwd: Path | None = None,
    options: tuple[str, ...] = (),
) -> Iterator[RunningDaemon]:
    """Start `theurian serve` (with `options`), wait until /health answers, and stop it with SIGINT afterwards."""
    installation.home.mkdir(parents=True, exist_ok=True)
    for attempt in range(PORT_ATTEMPTS):
        chosen = port or free_port()
        daemon = _start(installation, chosen, binary, cwd, options)
        try:
            _wait_for_health(daemon)
            break
        except _PortTaken:
            if port is not None or attempt == PORT_ATTEMPTS - 1:
                raise AssertionError(f"port {chosen} was taken: {daemon.log()}") from None
    remember(daemon.port, installation)
    try:
        yield daemon
    finally:
        forget(daemon.port)
        _stop(daemon)


def managed_start(installation: Installation, *options: str,
                  timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], int]:
    """`theurian daemon start --port P` (with `options`) on a free port, picked again when a parallel worker took
    it between the pick and the bind (as `running_daemon` does): (the command's result, its port). A start refused
    for any other reason is returned as it is, for the caller to assert on."""
    for attempt in range(PORT_ATTEMPTS):
        port = free_port()
        result = installation.cli("daemon", "start", *options, "--port", str(port), timeout=timeout)
        if f":{port} is already in use" not in result.stderr or attempt == PORT_ATTEMPTS - 1:
            return result, port
    raise AssertionError("unreachable: the last attempt returns")


def _start(installation: Installation, port: int, binary: Path, cwd: Path | None,
           options: tuple[str, ...]) -> RunningDaemon:
    log_path = installation.home / f"daemon-{port}.log"
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(
            [str(binary), "serve", "--port", str(port), *options],
            env=installation.env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, text=True,
        )
    return RunningDaemon(process, port, log_path, installation)


def _stop(daemon: RunningDaemon) -> None:
    if daemon.process.poll() is None:
        daemon.process.send_signal(signal.SIGINT)
        try:
            daemon.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            daemon.process.kill()
            daemon.process.wait()


def _wait_for_health(daemon: RunningDaemon) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if daemon.process.poll() is not None:
            if "already in use" in daemon.log():
                raise _PortTaken
            raise AssertionError(f"daemon exited {daemon.process.returncode}: {daemon.log()}")
        try:
            if httpx.get(f"{daemon.base_url}/health", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)  # polling for start-up, bounded by the deadline above
    _stop(daemon)
    raise AssertionError(f"daemon did not answer /health within {START_TIMEOUT_SECONDS}s: {daemon.log()}")
