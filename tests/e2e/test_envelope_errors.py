"""A malformed JSON-RPC envelope, POSTed to a real daemon: one line naming what is wrong, no value sent back.

Raw HTTP, because no MCP client sends these; the legacy era (no modern `MCP-Protocol-Version`) is where the SDK
answered them with pydantic's own text."""

from typing import Any

import httpx
import pytest

from serve.envelope import INVALID_REQUEST, LONE_SURROGATE, PARSE_ERROR
from tests.support.daemon import MCP_HEADERS, RunningDaemon, bearer, token_for
from tests.support.raw_http import LEGACY_VERSION, initialize_body, modern_call, post

SECRET = "hunter2-SECRET"
CALL = {"name": "knowledge.search", "arguments": {"projectId": SECRET, "query": SECRET}}

MALFORMED: dict[str, tuple[Any, int, str, Any]] = {
    "a batch": ([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": CALL}], INVALID_REQUEST,
                "a batch (a JSON array) is not accepted", None),
    "a number for method": ({"jsonrpc": "2.0", "id": 2, "method": 5, "params": CALL}, INVALID_REQUEST,
                            "`method` must be a string", 2),
    "jsonrpc 1.0": ({"jsonrpc": "1.0", "id": 3, "method": "tools/call", "params": CALL}, INVALID_REQUEST,
                    '`jsonrpc` must be the string "2.0"', 3),
    "an array for params": ({"jsonrpc": "2.0", "id": "x", "method": "tools/call", "params": [SECRET]},
                            INVALID_REQUEST, "`params` must be an object", "x"),
    "a bare string": (SECRET, INVALID_REQUEST, "one JSON-RPC message, a JSON object", None),
    "no method": ({"jsonrpc": "2.0", "id": 4, "params": CALL}, INVALID_REQUEST, "has no `method`", 4),
}


def _raw(daemon: RunningDaemon, body: bytes, version: str | None = None) -> httpx.Response:
    headers = MCP_HEADERS | bearer(token_for(daemon.mcp_url)) | ({"MCP-Protocol-Version": version} if version else {})
    with httpx.Client(timeout=30) as client:
        return client.post(daemon.mcp_url, content=body, headers=headers)


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_envelope_is_answered_in_one_line_naming_the_fault_and_no_value(
    module_daemon: RunningDaemon, case: str
) -> None:
    body, code, names, request_id = MALFORMED[case]
    with httpx.Client(timeout=30) as client:
        answer = post(client, module_daemon.mcp_url, body)
    assert answer.status_code == 400
    error = answer.json()
    assert error["id"] == request_id and error["error"]["code"] == code
    message = error["error"]["message"]
    assert names in message and "\n" not in message
    assert SECRET not in answer.text and "pydantic" not in answer.text and "knowledge.search" not in message


def test_a_body_that_is_not_json_is_a_parse_error_in_one_line(module_daemon: RunningDaemon) -> None:
    answer = _raw(module_daemon, b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"q": "' +
                  SECRET.encode() + b'"')
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == PARSE_ERROR and error["message"].startswith("Parse error: the body is not JSON (")
    assert SECRET not in answer.text and "\n" not in error["message"]


def test_a_well_formed_legacy_handshake_is_still_served(module_daemon: RunningDaemon) -> None:
    with httpx.Client(timeout=30) as client:
        answer = post(client, module_daemon.mcp_url, initialize_body())
    assert answer.status_code == 200 and "mcp-session-id" in answer.headers


def _surrogate_call(request_id: int) -> bytes:
    return (b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "review.findings", '
            b'"arguments": {"projectId": "none", "commitSha": "\\ud800"}}}' % request_id)


def test_a_lone_surrogate_is_refused_by_name_in_the_legacy_era_with_the_request_id(
    module_daemon: RunningDaemon,
) -> None:
    answer = _raw(module_daemon, _surrogate_call(7), LEGACY_VERSION)
    assert answer.status_code == 400
    assert answer.json() == {"jsonrpc": "2.0", "id": 7, "error": {"code": PARSE_ERROR, "message": LONE_SURROGATE}}


def test_a_lone_surrogate_reaches_the_tool_in_the_2026_era(module_daemon: RunningDaemon) -> None:
    headers, body = modern_call("review.findings", {"projectId": "none", "commitSha": "\ud800"}, 8)
    assert b"\\ud800" in body
    with httpx.Client(timeout=30) as client:
        answer = client.post(module_daemon.mcp_url, content=body, headers=headers | bearer(module_daemon.token))
    # Past the transport: a tool-call result (the dispatcher's: no such project), not a parse error.
    assert answer.status_code == 200, answer.text
    assert answer.json()["id"] == 8 and answer.json()["result"]["isError"] is True
    assert "PROJECT_NOT_REGISTERED" in answer.text
