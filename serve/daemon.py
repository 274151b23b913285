"""Running the daemon in the foreground: bind first (so a second daemon fails at once), then serve until Ctrl-C."""

from __future__ import annotations

import asyncio
import errno
import logging
import signal
import socket

import uvicorn

from serve.errors import PortInUseError
from serve.holdup import BoundedH11Protocol, max_connections, quiet_accept_errors
from serve.http_guard import LOOPBACK_HOSTS
from serve.log_lines import configure_logging
from serve.server import build_app
from serve.tooling import ServeSettings
from theurian import __version__, access_token, daemon_control, daemon_state, installation
from theurian.daemon_address import COMPAT_PATH, DEFAULT_HOST, DEFAULT_PORT, HEALTH_PATH, MCP_PATH, url, url_host
from theurian.errors import TheurianError

logger = logging.getLogger("theurian.serve")


def bind(host: str, port: int) -> socket.socket:
    """Bind the listening socket ourselves, so 'already in use' is a clear message rather than a log line.

    Raises:
        PortInUseError: the address is taken.
        TheurianError: the address cannot be bound for another reason.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must be IPPROTO_TCP: asyncio sets TCP_NODELAY only on accepted sockets that say so, and without it
    # every response waits out the peer's delayed ACK (~40 ms a call, measured).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUseError(
                f"{host}:{port} is already in use (another `theurian serve`?); stop it or pass --port"
            ) from exc
        raise TheurianError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, read_only: bool = False) -> None:
    """Serve until interrupted; `read_only` leaves the write-intent tools unregistered.

    A start-up failure is logged first, as one timestamped record (`theurian daemon did not start: REASON`): the
    log of a background daemon is its standard error, so a caller must not print the error again.

    Raises:
        ConfigError: the installation config names an unknown disclosure ceiling, or the access token is damaged.
        PortInUseError: another process holds the port.
        TheurianError: the address cannot be bound for another reason.
    """
    configure_logging()  # first: every record, a start-up failure's included, is one line with a timestamp
    try:
        settings = ServeSettings(disclosure_ceiling=installation.disclosure_ceiling(), read_only=read_only)
        access_token.current_token()  # created on first start; a damaged one stops the daemon here, not per call
        sock = bind(host, port)
    except TheurianError as exc:
        logger.error("%s%s", daemon_control.START_FAILURE, exc.message)
        raise
    # Written once the port is ours, so `daemon status` and `daemon start` see this daemon, however it started;
    # never over the record of another live daemon of this installation (its stop must still find it).
    other = daemon_control.running()
    record = daemon_state.write_record(host, port, __version__) if other is None else None
    if other is not None:
        logger.warning("another theurian daemon of this installation is running (pid %d at %s); `theurian daemon "
                       "status` and `daemon stop` keep meaning that one", other.pid, other.mcp_url)
    app = build_app(settings, host=host)
    BoundedH11Protocol.max_open = max_connections()
    # log_config=None: uvicorn's own set-up would give its loggers multi-line records without a timestamp.
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", http=BoundedH11Protocol)
    server = uvicorn.Server(config)
    shown_host = url_host(host)
    if host.strip("[]").lower() not in LOOPBACK_HOSTS:
        logger.warning("listening on %s, which is not loopback: any machine that reaches it can call the tools "
                       "(requests must still name it as their Host)", shown_host)
    logger.info("theurian serving MCP at %s (the same tools under underscore names at %s; health: %s)%s; Ctrl-C "
                "stops", url(host, port, MCP_PATH), COMPAT_PATH, HEALTH_PATH,
                " read-only: the write-intent tools are not registered" if read_only else "")
    logger.info("every %s request needs Authorization: Bearer <the token in %s> (`theurian auth token`)",
                MCP_PATH, access_token.token_path())
    # uvicorn shuts down gracefully on SIGTERM too, then raises the signal again with the handler it found: the
    # default one killed the process (exit 143) before it could say it had stopped. This one ends it cleanly.
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        asyncio.run(_serve(server, sock))
    except (KeyboardInterrupt, _Terminated):
        pass  # the signal uvicorn raises again once it has shut down, or a second one during shutdown
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
        if record is not None:
            daemon_state.remove_record(record.pid)
    logger.info("theurian daemon stopped")


async def _serve(server: uvicorn.Server, sock: socket.socket) -> None:
    quiet_accept_errors(asyncio.get_running_loop())
    await server.serve(sockets=[sock])


class _Terminated(Exception):  # noqa: N818 - it names what happened, as KeyboardInterrupt does
    """SIGTERM: a service manager asking the daemon to stop, answered as Ctrl-C is."""


def _terminated(signum: int, frame: object) -> None:
    raise _Terminated
