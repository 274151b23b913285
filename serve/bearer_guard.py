"""The local access token in front of every MCP route: `/mcp` and any path under `/mcp/` answer 401 unless the
request carries exactly one `Authorization: Bearer <token>` naming this installation's token.

The check runs before the request reaches the SDK, so a refused request starts no session, parses no body and
runs no tool. `/health` and every other path pass untouched. The token is compared in constant time and never
logged or echoed; it is read through `theurian.access_token.TokenFile`, so a rotation applies to the next request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

from serve.http_guard import ASGIApp, Receive, Scope, Send
from theurian import access_token
from theurian.daemon_address import MCP_PATH
from theurian.errors import TheurianError

logger = logging.getLogger("theurian.serve")

UNAUTHORIZED: Final = 401
UNAVAILABLE: Final = 503
_POLICY_VIOLATION: Final = 1008
_SCHEME: Final = b"bearer"
_MISSING_BODY: Final = (b"Authorization: Bearer <token> is required; `theurian auth token` prints this "
                        b"installation's token")
_WRONG_BODY: Final = b"the bearer token is not this installation's; `theurian auth token` prints the current one"
_GONE_BODY: Final = (b"this installation's access token file is gone, so no token is accepted; `theurian auth rotate` "
                     b"writes a new one")


def guarded(path: str) -> bool:
    """True for `/mcp` and every path under `/mcp/` (`/mcp/compat` and any route added there later)."""
    return path == MCP_PATH or path.startswith(MCP_PATH + "/")


class BearerGuard:
    def __init__(self, app: ASGIApp, *, token: Callable[[], str | None] | None = None) -> None:
        self.app = app
        self.token = token or access_token.TokenFile().token
        self._gone = False  # the token file was missing at the last check: logged once, when it went

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and guarded(str(scope.get("path", ""))):
            return await send({"type": "websocket.close", "code": _POLICY_VIOLATION})  # MCP speaks no websocket
        if scope["type"] == "http" and guarded(str(scope.get("path", ""))):
            values = [v for k, v in scope.get("headers", []) if k.lower() == b"authorization"]
            presented = _bearer(values)
            if presented is None:
                return await _refuse(send, _MISSING_BODY, b'Bearer realm="theurian"')
            try:
                expected = self.token()
            except TheurianError as exc:
                logger.error("cannot check the access token: %s", exc.message)
                return await _reply(send, UNAVAILABLE, b"the daemon cannot read its access token; "
                                    b"`theurian doctor` names the cure", [])
            self._note(gone=expected is None)
            if expected is None:
                return await _refuse(send, _GONE_BODY, b'Bearer realm="theurian", error="invalid_token"')
            if not access_token.matches(presented, expected):
                return await _refuse(send, _WRONG_BODY, b'Bearer realm="theurian", error="invalid_token"')
        await self.app(scope, receive, send)


    def _note(self, *, gone: bool) -> None:
        """Logs the token file going and coming back, once each."""
        if gone and not self._gone:
            logger.warning("the token file is gone: %s; every MCP request is refused (401) until `theurian auth "
                           "rotate` writes a new one", access_token.token_path())
        elif not gone and self._gone:
            logger.info("the token file is back: %s; its token is accepted", access_token.token_path())
        self._gone = gone


def _bearer(values: list[bytes]) -> bytes | None:
    """The token of the one `Authorization: Bearer …` header; None when absent, repeated or another scheme."""
    if len(values) != 1:
        return None
    scheme, _, credentials = values[0].strip().partition(b" ")
    credentials = credentials.strip()
    if scheme.lower() != _SCHEME or not credentials:
        return None
    return credentials


async def _refuse(send: Send, body: bytes, challenge: bytes) -> None:
    await _reply(send, UNAUTHORIZED, body, [(b"www-authenticate", challenge)])


async def _reply(send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]]) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
               *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
