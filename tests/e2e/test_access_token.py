"""The bearer token on every MCP route, against a real daemon: refused before any MCP processing, /health open,
a rotation honoured at once, and real clients (the SDK's, the Inspector CLI) admitted with the token."""

from __future__ import annotations

import httpx
import pytest

from serve.bearer_guard import UNAUTHORIZED
from tests.support.daemon import MCP_HEADERS, RunningDaemon, bearer
from tests.support.inspector import inspect
from tests.support.installation import Installation
from tests.support.mcp_client import call_tool
from theurian.access_token import TOKEN_NAME

CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "system.capabilities", "arguments": {}}}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "raw-test", "version": "0"}}}


def _calls_logged(daemon: RunningDaemon) -> int:
    return sum(" call " in line for line in daemon.log().splitlines())


def _wrong_tokens(daemon: RunningDaemon) -> dict[str, list[tuple[str, str]]]:
    token = daemon.token
    flipped = ("A" if token[0] != "A" else "B") + token[1:]
    return {
        "no header": [],
        "a wrong token of the right length": [("Authorization", f"Bearer {flipped}")],
        "a token one character short": [("Authorization", f"Bearer {token[:-1]}")],
        "a token one character long": [("Authorization", f"Bearer {token}x")],
        "another scheme": [("Authorization", f"Basic {token}")],
        "the scheme alone": [("Authorization", "Bearer")],
        "the right token twice": [("Authorization", f"Bearer {token}")] * 2,
    }


@pytest.mark.parametrize("case", [
    "no header", "a wrong token of the right length", "a token one character short", "a token one character long",
    "another scheme", "the scheme alone", "the right token twice"])
@pytest.mark.parametrize("path", ["/mcp", "/mcp/compat", "/mcp/"])
def test_a_missing_or_wrong_token_is_answered_401_and_no_tool_runs(module_daemon: RunningDaemon, case: str,
                                                                    path: str) -> None:
    before = _calls_logged(module_daemon)
    headers = [*MCP_HEADERS.items(), *_wrong_tokens(module_daemon)[case]]
    response = httpx.post(f"{module_daemon.base_url}{path}", json=CALL, headers=headers, timeout=10)
    assert response.status_code == UNAUTHORIZED
    assert response.headers["www-authenticate"].startswith("Bearer ")
    assert "jsonrpc" not in response.text and module_daemon.token not in response.text
    assert _calls_logged(module_daemon) == before  # refused before the SDK: no call reached a tool


def test_the_token_is_checked_before_the_body_is_read(module_daemon: RunningDaemon) -> None:
    """An oversized body without the token is a 401, not a 413: nothing of it was parsed."""
    response = httpx.post(module_daemon.mcp_url, content=b"x" * (5 * 1024 * 1024), headers=MCP_HEADERS, timeout=30)
    assert response.status_code == UNAUTHORIZED


def test_health_and_paths_outside_mcp_need_no_token(module_daemon: RunningDaemon) -> None:
    assert httpx.get(f"{module_daemon.base_url}/health", timeout=10).status_code == 200
    assert httpx.post(f"{module_daemon.base_url}/mcpx", json=CALL, timeout=10).status_code == 404


def test_the_right_token_is_admitted_whatever_the_case_of_the_scheme(module_daemon: RunningDaemon) -> None:
    for scheme in ("Bearer", "bearer", "BEARER"):
        headers = MCP_HEADERS | {"Authorization": f"{scheme} {module_daemon.token}"}
        assert httpx.post(module_daemon.mcp_url, json=INITIALIZE, headers=headers, timeout=10).status_code == 200


def test_a_route_under_mcp_with_the_token_reaches_the_app(module_daemon: RunningDaemon) -> None:
    response = httpx.post(f"{module_daemon.base_url}/mcp/no-such-route", json=CALL,
                          headers=module_daemon.mcp_headers, timeout=10)
    assert response.status_code == 404  # past the guard; the app has no such route


def test_a_rotated_token_stops_working_at_once_and_the_new_one_works_without_a_restart(
        installation: Installation, daemon: RunningDaemon) -> None:
    old = daemon.token
    assert not call_tool(daemon.mcp_url, "system.capabilities", {}, token=old).is_error
    rotated = installation.cli("auth", "rotate", check=True)
    new = rotated.stdout.strip()
    assert new != old and new == installation.token() == installation.cli("auth", "token").stdout.strip()
    before = _calls_logged(daemon)
    refused = httpx.post(daemon.mcp_url, json=CALL, headers=MCP_HEADERS | bearer(old), timeout=10)
    assert refused.status_code == UNAUTHORIZED
    assert _calls_logged(daemon) == before
    assert not call_tool(daemon.mcp_url, "system.capabilities", {}, token=new).is_error
    assert daemon.process.poll() is None  # the same process, never restarted
    assert old not in daemon.log() and new not in daemon.log()


def test_the_inspector_cli_is_refused_without_the_token_and_answered_with_it(module_daemon: RunningDaemon) -> None:
    refused = inspect(module_daemon.mcp_url, "--method", "tools/list", token="")
    assert refused.returncode != 0
    admitted = inspect(module_daemon.mcp_url, "--method", "tools/list")
    assert admitted.returncode == 0, admitted.stderr


def test_a_token_file_deleted_while_serving_refuses_every_token_until_a_new_one_is_written_and_logs_it_once(
        installation: Installation, daemon: RunningDaemon) -> None:
    old = daemon.token
    (installation.state_dir / TOKEN_NAME).unlink()
    for _ in range(3):
        refused = httpx.post(daemon.mcp_url, json=CALL, headers=MCP_HEADERS | bearer(old), timeout=10)
        assert refused.status_code == UNAUTHORIZED and "token file is gone" in refused.text
    assert not (installation.state_dir / TOKEN_NAME).exists()  # the daemon made no token nobody holds
    log = daemon.log_once_it_holds("the token file is gone: ")
    assert log.count("the token file is gone: ") == 1 and old not in log
    new = installation.cli("auth", "rotate", check=True).stdout.strip()
    assert not call_tool(daemon.mcp_url, "system.capabilities", {}, token=new).is_error
    assert "the token file is back: " in daemon.log() and new not in daemon.log()
