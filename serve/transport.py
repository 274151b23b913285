"""The HTTP side of the MCP routes: one SDK session manager per route, legacy-era sessions bounded, every
tools/call logged (a 2026-era notification-shaped one included, which the SDK acknowledges and drops unseen).

Legacy-era (2025-11-25) sessions: the SDK keeps each until its client sends DELETE or it has been idle 30 minutes,
and refuses every new session past 10,000 — so 10,000 `initialize` calls without DELETE locked every legacy
client out for up to half an hour. Here a route holds at most `MAX_LEGACY_SESSIONS`, each idle at most
`LEGACY_SESSION_IDLE_SECONDS`; at the bound a new session is admitted and the least recently used one that never
went past its handshake is closed (the least recently used of all if every session has been used). A flood of
handshakes then evicts itself, and clients that use their sessions keep them. The bound is per route, not per
client: every caller on loopback has the same address, so there is no client identity to bound by.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson
from mcp.server.lowlevel import Server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.routing import Route

from serve.envelope import EnvelopeCheck
from serve.holdup import cut_offs
from serve.http_guard import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger("theurian.serve")

MAX_LEGACY_SESSIONS: Final = 256
LEGACY_SESSION_IDLE_SECONDS: Final = 10 * 60
# The handshake is initialize and notifications/initialized: a session that saw no more never did anything.
_HANDSHAKE_REQUESTS: Final = 2
_SESSION_HEADER: Final = MCP_SESSION_ID_HEADER.lower().encode("latin-1")
_VERSION_HEADER: Final = b"mcp-protocol-version"


@dataclass
class _Session:
    requests: int = 1
    last_used: float = 0.0


class LegacySessions:
    """Bounds one route's legacy-era sessions (count and idle life), evicting as the module docstring says.

    Eviction goes through the SDK's own DELETE handling, so a closed session is torn down exactly as if its
    client had ended it.
    """

    def __init__(self, app: ASGIApp, *, limit: int = MAX_LEGACY_SESSIONS) -> None:
        self.app = app
        self.limit = limit
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._opening = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = _header(scope, _SESSION_HEADER)
        if session_id is not None:
            session = self._sessions.get(session_id)
            if session is not None:
                session.requests += 1
                session.last_used = time.monotonic()
                self._sessions.move_to_end(session_id)
            await self.app(scope, receive, send)
            if scope.get("method") == "DELETE":
                self._sessions.pop(session_id, None)
            return
        if scope.get("method") != "POST" or _is_modern(scope):
            return await self.app(scope, receive, send)
        # Sessions still opening count too, so a burst of simultaneous handshakes cannot pass the bound either.
        while self._sessions and len(self._sessions) + self._opening >= self.limit:
            await self._evict(scope)
        self._opening += 1
        opening = [True]  # until its answer starts: from then on the session, if any, is counted as open
        try:
            await self.app(scope, receive, self._noting_session(send, opening))
        finally:
            if opening[0]:
                self._opening -= 1

    def _noting_session(self, send: Send, opening: list[bool]) -> Send:
        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start":
                opened = next((value.decode("latin-1") for key, value in message.get("headers", [])
                               if key.lower() == _SESSION_HEADER), None)
                if opened is not None and message["status"] < 400:
                    self._sessions[opened] = _Session(last_used=time.monotonic())
                if opening[0]:  # in the same step as the line above, so no look at the bound sees it twice
                    opening[0] = False
                    self._opening -= 1
            await send(message)

        return noting

    async def _evict(self, scope: Scope) -> None:
        now = time.monotonic()
        # Sessions the SDK already let expire are still listed here: the oldest go first and cost nothing.
        victim = next((sid for sid, s in self._sessions.items()
                       if s.requests <= _HANDSHAKE_REQUESTS or now - s.last_used > LEGACY_SESSION_IDLE_SECONDS),
                      next(iter(self._sessions)))
        self._sessions.pop(victim)
        headers = [(k, v) for k, v in scope.get("headers", []) if k in (b"host", b"user-agent")]
        headers += [(_SESSION_HEADER, victim.encode("latin-1")), (_VERSION_HEADER, b"2025-11-25")]
        delete_scope = {**scope, "method": "DELETE", "headers": headers, "query_string": b""}

        async def nothing_more() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: Message) -> None:
            return None

        await self.app(delete_scope, nothing_more, discard)
        # A flood evicts once per handshake: one line per LOG_INTERVAL_SECONDS, the rest counted in the next.
        cut_offs.warning("legacy-sessions", f"legacy session limit ({self.limit}) reached on {scope.get('path')}: "
                         "closed the oldest idle session")


class CallLog:
    """Logs a 2026-era notification-shaped tools/call (no `id`), which the SDK answers 202 and drops before any
    tier of ours runs: one line, like every other call, with the outcome `unanswered`."""

    def __init__(self, app: ASGIApp, canonical: Callable[[str], str | None]) -> None:
        self.app = app
        self.canonical = canonical

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") == "POST" and _is_modern(scope):
            first = await receive()  # BodyDeadline has read the whole body already: this is all of it
            self._note_notification(first.get("body", b""))
            replayed = [first]

            async def replay() -> Message:
                return replayed.pop() if replayed else await receive()

            return await self.app(scope, replay, send)
        await self.app(scope, receive, send)

    def _note_notification(self, body: bytes) -> None:
        if b"tools/call" not in body:  # the cheap look first: most bodies are requests, parsed once, below us
            return
        try:
            decoded = orjson.loads(body)
        except orjson.JSONDecodeError:
            return
        if isinstance(decoded, dict) and "id" not in decoded and decoded.get("method") == "tools/call":
            params = decoded.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            tool = (self.canonical(name) if isinstance(name, str) else None) or "(unknown)"
            logger.info("call tool=%s project=- outcome=unanswered ms=0.0 (a notification: no id, so nothing ran "
                        "and nothing was answered)", tool)


class EndedStreams:
    """Completes a GET (SSE) stream the SDK stopped writing without ending it (what it does to every open stream
    when the daemon stops): the client reads a stream that ended, and uvicorn logs no `ASGI callable returned
    without completing response` ERROR over an ordinary stop."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "GET":
            return await self.app(scope, receive, send)
        state = {"started": False, "ended": False}

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start":
                state["started"] = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                state["ended"] = True
            await send(message)

        await self.app(scope, receive, noting)
        if state["started"] and not state["ended"]:
            with contextlib.suppress(OSError, RuntimeError):  # the client may have gone first: nothing to end
                await send({"type": "http.response.body", "body": b"", "more_body": False})


def mcp_routes_app(servers: Mapping[str, tuple[Server[Any], Callable[[str], str | None]]], *,
                   max_body_bytes: int, extra_routes: list[Route]) -> Starlette:
    """A Starlette app serving each `path -> (server, canonical name of a wire name)` with its own session
    manager, plus `extra_routes`."""
    managers = {
        path: StreamableHTTPSessionManager(
            app=server,
            # The SDK's own Host/Origin check is replaced by LoopbackGuard, which covers every route.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=max_body_bytes,
            session_idle_timeout=LEGACY_SESSION_IDLE_SECONDS,
            max_sessions=None,  # LegacySessions bounds them, evicting instead of refusing
        )
        for path, (server, _canonical) in servers.items()
    }
    routes = [
        Route(path, endpoint=CallLog(EnvelopeCheck(LegacySessions(EndedStreams(StreamableHTTPASGIApp(
            managers[path]))), is_modern=_is_modern, max_body_bytes=max_body_bytes), canonical))
        for path, (_server, canonical) in servers.items()
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for manager in managers.values():
                await stack.enter_async_context(manager.run())
            yield

    return Starlette(routes=[*routes, *extra_routes], lifespan=lifespan)


def _header(scope: Scope, name: bytes) -> str | None:
    return next((value.decode("latin-1") for key, value in scope.get("headers", []) if key == name), None)


def _is_modern(scope: Scope) -> bool:
    version = _header(scope, _VERSION_HEADER)
    return version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS
