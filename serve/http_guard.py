"""DNS-rebinding protection for every route: the Host must name a loopback host (or the one the operator bound),
and an Origin, when sent, must be http(s) on such a host with any port or none.

The SDK's own check covers /mcp only, matches `host:*` as a string prefix (so `127.0.0.1:1@evil.com` passed) and
refuses a loopback Origin that names no port; this guard parses both headers instead and fronts /health too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1"})
MISDIRECTED: Final = 421
FORBIDDEN: Final = 403


class LoopbackGuard:
    def __init__(self, app: ASGIApp, *, hosts: frozenset[str] = LOOPBACK_HOSTS) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            pairs = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope.get("headers", [])]
            hosts = [value for key, value in pairs if key == "host"]
            if len(hosts) != 1 or not host_allowed(hosts[0], self.hosts):
                return await _reply(send, MISDIRECTED, b"Invalid Host header")
            # Every Origin sent must pass: judging only one (a dict keeps the last) let a foreign one in beside it.
            origins = [value for key, value in pairs if key == "origin"]
            if not all(origin_allowed(origin, self.hosts) for origin in origins):
                return await _reply(send, FORBIDDEN, b"Invalid Origin header")
        await self.app(scope, receive, send)


def host_allowed(host: str | None, hosts: frozenset[str]) -> bool:
    if host is None:
        return False
    try:
        parts = urlsplit(f"//{host}")
    except ValueError:  # `[::1` and the like: no authority at all, so no loopback one
        return False
    return _authority_allowed(parts, hosts)


def origin_allowed(origin: str, hosts: frozenset[str]) -> bool:
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.path in ("", "/") and _authority_allowed(parts, hosts)


def _authority_allowed(parts: Any, hosts: frozenset[str]) -> bool:
    if parts.username is not None or parts.password is not None or parts.query or parts.fragment:
        return False
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError:
        return False
    return parts.hostname in hosts


async def _reply(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
