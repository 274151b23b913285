"""The daemon end to end: a real `theurian serve`, the SDK's client in both protocol eras, raw HTTP where the
check is below MCP (Host, Origin, body size, /health)."""

from pathlib import Path

import httpx
import jsonschema
import pytest

import schemas
from serve.server import MAX_REQUEST_BODY_BYTES
from serve.tools import registered_tools
from serve.tools.system import UNREADABLE_REMEDY, capabilities_of
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, call_tool, call_tools, list_tools
from theurian import PROTOCOL_VERSION, __version__

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "raw-test", "version": "0"}},
}
SECRET = "ARGUMENT-VALUE-NEVER-LOGGED"


def _response_schema_check(tool: str, structured: dict) -> None:
    name = next(t.output_schema for t in registered_tools() if t.name == tool)
    jsonschema.Draft202012Validator(schemas.load("mcp", name)).validate(structured)


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_tools_list_names_exactly_the_callable_tools_with_their_schemas(
    module_daemon: RunningDaemon, mode: Mode
) -> None:
    listed = list_tools(module_daemon.mcp_url, mode)
    assert sorted(t.name for t in listed) == sorted(t.name for t in registered_tools())
    for tool in listed:
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_project_list_answers_none_then_registered_then_unreadable(
    module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path, mode: Mode
) -> None:
    registry = module_installation.home / "config" / "projects.toml"
    registry.unlink(missing_ok=True)
    empty = call_tool(module_daemon.mcp_url, "project.list", {}, mode)
    assert empty.structured == {"count": 0, "projects": [], "unreadable": [], "remedy": None}

    module_installation.new_project(tmp_path / "demo")
    registered = call_tool(module_daemon.mcp_url, "project.list", {}, mode)
    assert registered.structured == {
        "count": 1, "projects": [{"projectId": "demo", "rootPath": str((tmp_path / "demo").resolve())}],
        "unreadable": [], "remedy": None,
    }

    registry.write_text(registry.read_text(encoding="utf-8") + '\n[projects."api"]\nnote = "no root"\n',
                        encoding="utf-8")
    unreadable = call_tool(module_daemon.mcp_url, "project.list", {}, mode)
    assert unreadable.structured is not None
    assert unreadable.structured["count"] == 1
    assert unreadable.structured["unreadable"] == ["api"]
    assert unreadable.structured["remedy"] == UNREADABLE_REMEDY
    for answer in (empty, registered, unreadable):
        assert answer.structured is not None
        _response_schema_check("project.list", answer.structured)
    registry.unlink()


def _registered_with_hand_edit(installation: Installation, tmp_path: Path, table: str) -> Path:
    """A fresh registry holding one project registered by the CLI (`demo`), then `table` added by hand: returns the
    registry, which the test removes when done (the module's daemon reads it live)."""
    registry = installation.home / "config" / "projects.toml"
    registry.unlink(missing_ok=True)
    installation.new_project(tmp_path / "demo")
    registry.write_text(registry.read_text(encoding="utf-8") + f"\n{table}\n", encoding="utf-8")
    return registry


def test_an_id_no_tool_admits_is_unreadable_not_counted(
    module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path
) -> None:
    """count is how many projects can be queried: a hand-edited id past projectId's bound cannot be."""
    too_long = "l" * 201
    registry = _registered_with_hand_edit(module_installation, tmp_path,
                                          f'[projects."{too_long}"]\nroot = "{tmp_path}"')
    answer = call_tool(module_daemon.mcp_url, "project.list", {})
    registry.unlink()
    assert answer.structured is not None
    assert (answer.structured["count"], answer.structured["unreadable"]) == (1, [too_long])
    assert answer.structured["remedy"] == UNREADABLE_REMEDY
    _response_schema_check("project.list", answer.structured)


def test_a_malformed_registry_is_a_refusal_not_a_crash(
    module_installation: Installation, module_daemon: RunningDaemon
) -> None:
    registry = module_installation.home / "config" / "projects.toml"
    registry.parent.mkdir(parents=True, exist_ok=True)
    registry.write_text("[projects\n", encoding="utf-8")
    answer = call_tool(module_daemon.mcp_url, "project.list", {})
    registry.unlink()
    assert answer.is_error and answer.structured is None
    assert answer.text.startswith("the project registry is not valid TOML (") and str(registry) not in answer.text


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_capabilities_are_derived_from_what_is_registered(module_daemon: RunningDaemon, mode: Mode) -> None:
    answer = call_tool(module_daemon.mcp_url, "system.capabilities", {}, mode)
    assert not answer.is_error and answer.structured is not None
    _response_schema_check("system.capabilities", answer.structured)
    listed = {t.name for t in list_tools(module_daemon.mcp_url, mode)}
    capabilities = answer.structured["capabilities"]
    assert capabilities == capabilities_of(registered_tools())
    assert capabilities["reviewFindings"] == ("review.findings" in listed)
    assert capabilities["reviewIngestion"] == ("review.search" in listed)
    assert capabilities["reviewIngestionScope"] == ("public-allowlisted" if "review.search" in listed else None)
    assert capabilities["traceability"] is False
    assert answer.structured["tools"] == sorted(listed)
    assert answer.structured["version"] == __version__
    assert answer.structured["protocolVersion"] == PROTOCOL_VERSION == "theurian/v1"


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_bad_arguments_are_refused_with_the_key_named_and_the_value_never_echoed(
    module_daemon: RunningDaemon, mode: Mode
) -> None:
    answers = call_tools(module_daemon.mcp_url, [
        ("project.list", {"verbose": SECRET}),
        ("system.capabilities", {"projectId": SECRET}),
        ("project.list", {}),
    ], mode)
    unknown, to_capabilities, fine = answers
    assert unknown.is_error and unknown.structured is None
    assert unknown.text == "Invalid arguments for project.list: unknown key `verbose` is not accepted by this tool."
    assert to_capabilities.is_error
    assert "`projectId`" in to_capabilities.text and SECRET not in to_capabilities.text
    assert not fine.is_error


def test_a_wrong_type_and_an_unknown_tool_are_refusals_in_the_same_shape(module_daemon: RunningDaemon) -> None:
    wrong_type, unknown_tool = call_tools(module_daemon.mcp_url, [
        ("knowledge.search", {"projectId": 5, "query": SECRET}),
        ("trace.get", {}),
    ])
    for answer in (wrong_type, unknown_tool):
        assert answer.is_error and answer.structured is None and SECRET not in answer.text
    assert "No tool 'trace.get' is served by this daemon" in unknown_tool.text


def _raw_session(daemon: RunningDaemon, client: httpx.Client) -> dict[str, str]:
    response = client.post(daemon.mcp_url, json=INITIALIZE, headers=daemon.mcp_headers)
    assert response.status_code == 200, response.text
    headers = dict(daemon.mcp_headers)
    headers["mcp-session-id"] = response.headers["mcp-session-id"]
    headers["mcp-protocol-version"] = "2025-11-25"
    client.post(daemon.mcp_url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


def _raw_result(response: httpx.Response) -> dict:
    import json

    body = response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        body = next(line[len("data:"):] for line in body.splitlines() if line.startswith("data:"))
    return json.loads(body)["result"]


def test_a_middleware_refusal_and_a_tool_refusal_carry_the_same_key_set_on_the_wire(
    module_installation: Installation, module_daemon: RunningDaemon
) -> None:
    registry = module_installation.home / "config" / "projects.toml"
    with httpx.Client(timeout=10) as client:
        headers = _raw_session(module_daemon, client)
        invalid = client.post(module_daemon.mcp_url, headers=headers, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "project.list", "arguments": {"x": SECRET}}})
        registry.parent.mkdir(parents=True, exist_ok=True)
        registry.write_text("[projects\n", encoding="utf-8")
        refused_in_tool = client.post(module_daemon.mcp_url, headers=headers, json={
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "project.list", "arguments": {}}})
        registry.unlink()
    middleware_result, tool_result = _raw_result(invalid), _raw_result(refused_in_tool)
    assert set(middleware_result) == set(tool_result) == {"content", "isError"}
    assert middleware_result["isError"] is tool_result["isError"] is True
    assert SECRET not in invalid.text


@pytest.mark.parametrize("headers, status", [
    ({"Host": "evil.example.com"}, 421),
    ({"Host": "127.0.0.1:7419@evil.example.com"}, 421),
    ({"Host": "localhost.evil.example.com"}, 421),
    ({"Host": "127.0.0.1:notaport"}, 421),
    ({"Origin": "http://evil.example.com"}, 403),
    ({"Origin": "http://localhost:5.evil.example.com"}, 403),
    ({"Origin": "http://user@localhost:1"}, 403),
    ({"Origin": "file://localhost"}, 403),
    ({"Origin": "null"}, 403),
    ({"Host": "[::1"}, 421),  # not an authority at all: was an internal error (500) and a traceback in the log
    ({"Origin": "http://[::1"}, 403),
])
@pytest.mark.parametrize("path", ["/mcp", "/health"])
def test_dns_rebinding_shapes_are_refused_on_every_route(
    module_daemon: RunningDaemon, headers: dict, status: int, path: str
) -> None:
    response = httpx.request("POST" if path == "/mcp" else "GET", f"{module_daemon.base_url}{path}",
                             json=INITIALIZE if path == "/mcp" else None,
                             headers=module_daemon.mcp_headers | headers, timeout=10)
    assert response.status_code == status


@pytest.mark.parametrize("headers", [
    {"Origin": "http://localhost:5173"}, {"Origin": "http://127.0.0.1:6274"}, {"Origin": "http://[::1]:1"},
    {"Origin": "http://127.0.0.1"}, {"Origin": "https://localhost"}, {"Origin": "http://LOCALHOST:3000"},
    {"Host": "localhost"}, {"Host": "[::1]:7"},
])
def test_loopback_hosts_and_origins_with_any_port_or_none_are_admitted(
    module_daemon: RunningDaemon, headers: dict
) -> None:
    response = httpx.post(module_daemon.mcp_url, json=INITIALIZE, headers=module_daemon.mcp_headers | headers,
                          timeout=10)
    assert response.status_code == 200


@pytest.mark.parametrize("path", ["/mcp", "/health"])
def test_a_foreign_origin_sent_beside_a_loopback_one_is_refused(module_daemon: RunningDaemon, path: str) -> None:
    """Only the last Origin was judged, so a foreign one followed by a loopback one got in."""
    headers = [*module_daemon.mcp_headers.items(), ("Origin", "http://evil.example.com"), ("Origin", "http://localhost")]
    response = httpx.request("POST" if path == "/mcp" else "GET", f"{module_daemon.base_url}{path}",
                             json=INITIALIZE if path == "/mcp" else None, headers=headers, timeout=10)
    assert response.status_code == 403


def test_an_oversized_body_is_refused_before_it_is_parsed(module_daemon: RunningDaemon) -> None:
    padding = "x" * (MAX_REQUEST_BODY_BYTES + 1)
    body = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "project.list", "arguments": {"pad": padding}}}
    response = httpx.post(module_daemon.mcp_url, json=body, headers=module_daemon.mcp_headers, timeout=30)
    assert response.status_code == 413


def test_health_answers_liveness_and_version_as_json(module_daemon: RunningDaemon) -> None:
    response = httpx.get(f"{module_daemon.base_url}/health", timeout=10)
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "version": __version__, "protocolVersion": PROTOCOL_VERSION}


def test_each_call_logs_one_line_with_tool_outcome_and_time_but_no_argument_value(
    module_daemon: RunningDaemon
) -> None:
    before = module_daemon.log().count("\n")
    call_tools(module_daemon.mcp_url, [("system.capabilities", {}), ("project.list", {"q": SECRET})])
    lines = [line for line in module_daemon.log().splitlines()[before:] if " call " in line]
    assert len(lines) == 2
    assert "tool=system.capabilities project=- outcome=ok ms=" in lines[0]
    assert "tool=project.list project=- outcome=invalid ms=" in lines[1]
    assert SECRET not in module_daemon.log()


def test_a_registered_id_holding_a_newline_still_logs_one_line_per_call(
    module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path
) -> None:
    """The registry is the operator's file: a hand-edited id with a line break split the call's log line in two."""
    # TOML's \n: a real line break in the id.
    registry = _registered_with_hand_edit(module_installation, tmp_path,
                                          f'[projects."two\\nlines"]\nroot = "{tmp_path / "demo"}"')
    before = module_daemon.log().count("\n")
    call_tool(module_daemon.mcp_url, "knowledge.status", {"projectId": "two\nlines"})
    registry.unlink()
    after = module_daemon.log().splitlines()[before:]
    [line] = [entry for entry in after if " call " in entry]
    assert "tool=knowledge.status project=two\\nlines outcome=" in line
    assert not any(entry.startswith("lines") for entry in after)


def test_a_call_the_sdk_refuses_after_our_check_is_logged_unanswered_not_ok(module_daemon: RunningDaemon) -> None:
    """A `_meta` that is no object passes our argument check and is refused by the SDK: no tool ran."""
    before = module_daemon.log().count("\n")
    with httpx.Client(timeout=10) as client:
        headers = _raw_session(module_daemon, client)
        body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "system.capabilities", "arguments": {}, "_meta": 5}}
        response = client.post(module_daemon.mcp_url, json=body, headers=headers)
    assert '"error"' in response.text and '"result"' not in response.text  # JSON-RPC's error: no tool result
    lines = [line for line in module_daemon.log().splitlines()[before:] if " call " in line]
    assert [line.split(" call ", 1)[1].rsplit(" ms=", 1)[0] for line in lines] == [
        "tool=system.capabilities project=- outcome=unanswered"]


def test_json_the_sdk_cannot_decode_is_a_parse_error_and_the_daemon_keeps_serving(
    module_daemon: RunningDaemon,
) -> None:
    # A lone surrogate escape and an integer past Python's 4,300-digit limit never reach a tool: the SDK's JSON
    # decoding answers a JSON-RPC parse error first (docs/decisions.md). What matters here: no crash, no hang.
    with httpx.Client(timeout=10) as client:
        headers = _raw_session(module_daemon, client)
        for raw in ('"q": "\\ud800"', f'"pullRequest": {"9" * 5000}'):
            body = ('{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "review.search", '
                    f'"arguments": {{"projectId": "p", {raw}}}}}}}')
            response = client.post(module_daemon.mcp_url, content=body.encode(), headers=headers)
            assert response.status_code == 400
            assert response.json()["error"]["code"] == -32700
    assert not call_tool(module_daemon.mcp_url, "system.capabilities", {}).is_error
