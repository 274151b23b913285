"""The JSON-RPC envelope of a legacy-era (2025-11-25) POST, checked before the SDK parses it.

The SDK's legacy transport answers a body it cannot parse or validate with pydantic's own text: 13-19 lines of
model names, pydantic.dev links and the values the caller sent (an argument's secret included). Here such a body
gets one line naming what is wrong and no value — `-32700` for a body that is not JSON, `-32600` for JSON that is
no JSON-RPC message — with the request's `id` when it has a usable one. A body the SDK accepts is handed on as it
came. (The 2026-era transport already answers these with one constant line of its own.)

A lone surrogate escape (`"\\ud800"`) is JSON Python reads, but not JSON the SDK's legacy parser reads: such a body
is refused here naming that, since the 2026 era carries it to the tool (knowledge.search folds it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Final

import orjson
import pydantic_core
from mcp.types import jsonrpc_message_adapter
from pydantic import ValidationError

from serve.http_guard import ASGIApp, Message, Receive, Scope, Send
from theurian.text import is_utf8

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
BAD_REQUEST: Final = 400
LONE_SURROGATE: Final = (
    "Parse error: the body holds a lone surrogate escape (\\uD800-\\uDFFF with no pair), which this protocol "
    "era's parser cannot read; send the text without it, or call in the 2026-07-28 era, which carries it to the tool."
)
_ENVELOPE_KEYS: Final = ("jsonrpc", "id", "method", "params", "result", "error")


class EnvelopeCheck:
    """Answers a legacy-era POST whose body the SDK would refuse with its own multi-line text (see the module)."""

    def __init__(self, app: ASGIApp, *, is_modern: Callable[[Scope], bool], max_body_bytes: int) -> None:
        self.app = app
        self.is_modern = is_modern
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "POST" or self.is_modern(scope):
            return await self.app(scope, receive, send)
        read: list[Message] = []
        size = 0
        # BodyDeadline has read the body already (up to its bound): these come from its replay, not the socket.
        while True:
            message = await receive()
            read.append(message)
            size += len(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body") or size > self.max_body_bytes:
                break

        async def replay() -> Message:
            return read.pop(0) if read else await receive()

        if size > self.max_body_bytes or read[-1]["type"] != "http.request":
            return await self.app(scope, replay, send)  # the SDK's own size limit answers it, or the disconnect
        refusal = envelope_refusal(b"".join(message.get("body", b"") for message in read))
        if refusal is None:
            return await self.app(scope, replay, send)
        await _answer(send, refusal)


def envelope_refusal(body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC error answering `body`, or None when the SDK reads it as one JSON-RPC message."""
    try:
        raw = pydantic_core.from_json(body)
    except ValueError:
        return _unparsed(body)
    try:
        jsonrpc_message_adapter.validate_python(raw, by_name=False)
    except ValidationError:
        return _error(_usable_id(raw), INVALID_REQUEST, f"Invalid request: {_what_is_wrong(raw)}")
    return None


def _unparsed(body: bytes) -> dict[str, Any]:
    try:
        decoded = json.loads(body)
    except json.JSONDecodeError as exc:  # its msg is json's own fixed wording; the position is no value sent
        return _error(None, PARSE_ERROR, f"Parse error: the body is not JSON ({exc.msg} at line {exc.lineno}, "
                                         f"column {exc.colno}).")
    except (ValueError, RecursionError):  # not UTF-8, an integer past Python's digit limit, nesting too deep
        return _error(None, PARSE_ERROR, "Parse error: the body cannot be read as JSON (bytes that are not UTF-8, "
                                         "a number past 4,300 digits, or nesting too deep).")
    if any(not is_utf8(text) for text in _strings(decoded)):
        return _error(_usable_id(decoded), PARSE_ERROR, LONE_SURROGATE)
    return _error(None, PARSE_ERROR, "Parse error: the body is JSON this protocol era's parser cannot read.")


def _what_is_wrong(raw: Any) -> str:
    if isinstance(raw, list):
        return "a batch (a JSON array) is not accepted; send one JSON-RPC message per request."
    if not isinstance(raw, dict):
        return "the body must be one JSON-RPC message, a JSON object."
    if raw.get("jsonrpc") != "2.0":
        return '`jsonrpc` must be the string "2.0".'
    if "method" in raw and not isinstance(raw["method"], str):
        return "`method` must be a string."
    if "id" in raw and _usable_id(raw) is None:
        return "`id` must be a string or an integer."
    if "params" in raw and not isinstance(raw["params"], dict):
        return "`params` must be an object."
    if not any(key in raw for key in ("method", "result", "error")):
        return "the message has no `method` (nor the `result` or `error` of a response)."
    return "the body is no JSON-RPC 2.0 request, notification or response (its keys: " + ", ".join(
        f"`{key}`" for key in _ENVELOPE_KEYS if key in raw) + ")."


def _usable_id(raw: Any) -> str | int | None:
    request_id = raw.get("id") if isinstance(raw, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        return None
    if isinstance(request_id, str) and not is_utf8(request_id):
        return None
    return request_id


def _strings(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _error(request_id: str | int | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


async def _answer(send: Send, error: dict[str, Any]) -> None:
    body = orjson.dumps(error)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": BAD_REQUEST, "headers": headers})
    await send({"type": "http.response.body", "body": body})
