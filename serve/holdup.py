"""Bounds that keep a few misbehaving local programs from stalling or locking out every other caller.

Measured against the daemon before these bounds: a request dripping its headers or body a byte a second was held
for minutes, and enough of them exhausted the descriptors (then `/health` timed out and the log grew by megabytes
of accept errors a second). Here:

- a request's headers must be complete within `HEADER_DEADLINE_SECONDS` of the connection opening (or of the
  previous response on a kept-alive connection), and its body within `BODY_DEADLINE_SECONDS` of the headers;
  past either the connection is closed (the body's with a `408` first);
- at most `max_connections()` connections are open at once; one past it is closed as soon as it is accepted;
- a client that goes away in the middle of its body is logged as one line, and nothing below this tier sees it;
- repeated cut-offs and accept errors are logged at most once per `LOG_INTERVAL_SECONDS`, with a count.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections.abc import Callable
from typing import Any, Final

import anyio
from uvicorn.protocols.http.h11_impl import H11Protocol

from serve.http_guard import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger("theurian.serve")

HEADER_DEADLINE_SECONDS: Final = 10.0
BODY_DEADLINE_SECONDS: Final = 10.0
# Leaves the rest of the descriptor limit to the stores, the registry and the log; never more than this.
MAX_CONNECTIONS_CEILING: Final = 1000
LOG_INTERVAL_SECONDS: Final = 10.0
REQUEST_TIMEOUT: Final = 408


def max_connections() -> int:
    """Half the process's open-file limit, at most MAX_CONNECTIONS_CEILING."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS_CEILING
    return max(1, min(MAX_CONNECTIONS_CEILING, soft // 2))


class RateLimitedLog:
    """One warning line per `interval` seconds per kind of event; the ones left out are counted in the next."""

    def __init__(self, interval: float = LOG_INTERVAL_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.clock = clock
        self._last: dict[str, float] = {}
        self._left_out: dict[str, int] = {}

    def warning(self, kind: str, message: str) -> None:
        now = self.clock()
        if now - self._last.get(kind, -self.interval) < self.interval:
            self._left_out[kind] = self._left_out.get(kind, 0) + 1
            return
        left_out = self._left_out.pop(kind, 0)
        self._last[kind] = now
        suffix = f" ({left_out} more like it in the last {self.interval:.0f} s not logged)" if left_out else ""
        logger.warning("%s%s", message, suffix)


cut_offs = RateLimitedLog()


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header deadline and a connection ceiling (uvicorn bounds neither)."""

    max_open: int = MAX_CONNECTIONS_CEILING  # set from max_connections() by the daemon before it serves

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_open:
            cut_offs.warning("connections", f"a connection past the limit of {self.max_open} open ones was closed")
            transport.close()
            return
        self._arm_header_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm_header_deadline()  # the next request on this connection has its own deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        super().connection_lost(exc)

    def _arm_header_deadline(self) -> None:
        self._disarm_header_deadline()
        if not self.transport.is_closing():
            self._header_deadline = self.loop.call_later(HEADER_DEADLINE_SECONDS, self._header_deadline_passed)

    def _disarm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _header_deadline_passed(self) -> None:
        self._header_deadline = None
        # A cycle whose response is still to come had its headers parsed in time: the body deadline covers it.
        if self.cycle is not None and not self.cycle.response_complete:
            return
        if not self.transport.is_closing():
            cut_offs.warning("headers", f"a connection sent no complete request headers within "
                             f"{HEADER_DEADLINE_SECONDS:.0f} s and was closed")
            self.transport.close()


class BodyDeadline:
    """Read each request's whole body (within BODY_DEADLINE_SECONDS) before the app sees the request.

    A body past `max_body_bytes` is handed on unread beyond that point, so the SDK's own size limit answers it.
    """

    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        read: list[Message] = []
        size = 0
        try:
            with anyio.fail_after(BODY_DEADLINE_SECONDS):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        logger.info("client went away after %d bytes of its request body (%s %s); nothing ran",
                                    size, scope.get("method"), scope.get("path"))
                        return None
                    read.append(message)
                    size += len(message.get("body", b""))
                    if not message.get("more_body") or size > self.max_body_bytes:
                        break
        except TimeoutError:
            cut_offs.warning("body", f"a request body was not complete within {BODY_DEADLINE_SECONDS:.0f} s "
                             f"({size} bytes read); answered {REQUEST_TIMEOUT} and closed")
            return await _timed_out(send)
        return await self.app(scope, _replaying(read, receive), send)


def _replaying(read: list[Message], receive: Receive) -> Receive:
    pending = list(read)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


async def _timed_out(send: Send) -> None:
    body = b"Request body not received in time"
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close")]
    await send({"type": "http.response.start", "status": REQUEST_TIMEOUT, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Log the event loop's accept errors (`Too many open files` and the like) as rate-limited single lines.

    asyncio retries the accept a second later and logs each failure with a traceback; under a descriptor flood
    that was megabytes a second.
    """
    default = loop.get_exception_handler()

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", ""))
        if message.startswith("socket.accept() out of system resource"):
            exc = context.get("exception")
            cut_offs.warning("accept", f"cannot accept a connection: {exc}; retrying")
            return
        if default is not None:
            default(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handle)
