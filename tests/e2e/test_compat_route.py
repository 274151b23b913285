"""/mcp/compat end to end: a client that enforces `^[a-zA-Z0-9_-]{1,64}$` (the SDK's, then the MCP Inspector CLI)
lists every tool there and calls each one, getting the answers and refusals /mcp gives, named as it called them."""

import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

import schemas
from serve.compat import STRICT_TOOL_NAME, compat_naming
from serve.tools import registered_tools
from tests.support.daemon import RunningDaemon
from tests.support.inspector import INSPECTOR_TOOL_REFUSED_EXIT, first_json, inspect
from tests.support.installation import Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, list_tools
from tests.support.mcp_session import McpSession
from tests.support.sample_project import built_sample_project
from tests.support.schema_values import minimal_arguments

ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
TOOLS = registered_tools()
NAMING = compat_naming(t.name for t in TOOLS)
# Arguments that reach real answers in the sample project (the minimal ones would ask for an item "a").
SERVED = {"knowledge.get": {"itemId": "testing.flaky-retries"}, "knowledge.search": {"query": "retry"},
          "review.search": {"q": "lock"}}


def _fresh_ids_masked(text: str) -> str:
    """A write-intent tool names the proposal it drafted: each call drafts its own, with a fresh ULID."""
    return ULID.sub("<ulid>", text)


@pytest.fixture(scope="module")
def sample(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> str:
    built_sample_project(module_installation, tmp_path_factory.mktemp("compat") / "sample")
    return "sample"


@pytest.fixture(scope="module")
def sessions(module_daemon: RunningDaemon, sample: str) -> Iterator[tuple[McpSession, McpSession]]:
    with McpSession(module_daemon.compat_url, "legacy") as compat, McpSession(module_daemon.mcp_url) as dotted:
        yield compat, dotted


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_strict_client_sees_every_tool_with_a_name_it_accepts(module_daemon: RunningDaemon, mode: Mode) -> None:
    listed = list_tools(module_daemon.compat_url, mode)
    assert all(STRICT_TOOL_NAME.fullmatch(tool.name) for tool in listed)
    assert sorted(tool.name for tool in listed) == sorted(NAMING.wire(t.name) for t in TOOLS)
    by_name = {tool.name: tool for tool in list_tools(module_daemon.mcp_url, mode)}
    for tool in listed:  # the same schemas, titles and hints as /mcp, their prose naming the tools as compat does
        dotted = by_name[NAMING.canonical(tool.name) or ""]
        assert (tool.input_schema, tool.output_schema, tool.annotations) == (
            NAMING.in_schema(dotted.input_schema), NAMING.in_schema(dotted.output_schema), dotted.annotations)


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key, f"{path}/(key)")
            yield from _strings(item, f"{path}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}/{index}")


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_no_string_of_the_compat_tools_list_names_a_tool_with_a_dot(module_daemon: RunningDaemon, mode: Mode) -> None:
    dotted = re.compile(r"\b(?:" + "|".join(re.escape(t.name) for t in TOOLS) + r")\b")
    listed = list_tools(module_daemon.compat_url, mode)
    strings = [item for tool in listed for item in _strings(tool.model_dump(mode="json", by_alias=True), tool.name)]
    assert len(strings) > 1000  # every title, description, key and value of every tool, not a handful
    assert [(path, text) for path, text in strings if dotted.search(text)] == []
    on_mcp = [text for tool in list_tools(module_daemon.mcp_url, mode)
              for _, text in _strings(tool.model_dump(mode="json", by_alias=True), tool.name)]
    assert sum(1 for text in on_mcp if dotted.search(text)) >= 44  # the same walk does see them on /mcp


@pytest.mark.parametrize("tool", TOOLS, ids=[t.name for t in TOOLS])
def test_every_tool_answers_through_the_compat_route_as_it_does_on_mcp(
    sessions: tuple[McpSession, McpSession], sample: str, tool
) -> None:
    compat, dotted = sessions
    arguments = minimal_arguments(tool.input_schema, sample) | SERVED.get(tool.name, {})
    through_compat = compat.call(NAMING.wire(tool.name), arguments)
    through_mcp = dotted.call(tool.name, arguments)
    assert through_compat.is_error == through_mcp.is_error
    if through_compat.is_error:
        assert _fresh_ids_masked(through_compat.content[0].text) == _fresh_ids_masked(
            NAMING.in_text(through_mcp.content[0].text))
        return
    jsonschema.Draft202012Validator(schemas.load("mcp", tool.output_schema)).validate(
        through_compat.structured_content)
    if tool.name == "system.capabilities":
        assert through_compat.structured_content["tools"] == sorted(NAMING.wire(t.name) for t in TOOLS)


def test_the_read_tools_answer_with_data_through_the_compat_route(sessions: tuple[McpSession, McpSession]) -> None:
    compat, _dotted = sessions
    data = {}
    for name, extra in SERVED.items():
        answer = compat.call(NAMING.wire(name), {"projectId": "sample"} | extra)
        assert not answer.is_error, answer.content
        data[name] = answer.structured_content
    item = data["knowledge.get"]
    assert (item["itemId"], item["revisionId"], item["title"]) == (
        "testing.flaky-retries", "01K1A0000000000000000000R2", "Do not retry flaky tests in CI")
    assert [hit["itemId"] for hit in data["knowledge.search"]["results"]] == ["testing.flaky-retries"]
    assert [(record["recordKey"], record["kind"]) for record in data["review.search"]["records"]] == [
        ("PR_kwDOAcme0042", "pull-request"), ("PRR_kwDOAcme0001", "review-submission"),
        ("PRRT_kwDOAcme0001", "review-thread")]  # the sample's records mentioning a lock, in review.search's order


def test_a_dotted_name_on_the_compat_route_is_not_served_and_says_where_to_look(module_daemon: RunningDaemon) -> None:
    with McpSession(module_daemon.compat_url) as compat:
        answer = compat.call("review.search", {"projectId": "sample"})
    assert answer.is_error
    assert answer.content[0].text == (
        "No tool 'review.search' is served by this daemon; tools/list names the callable tools.")


def test_the_inspector_lists_and_calls_through_the_compat_route(module_daemon: RunningDaemon, sample: str) -> None:
    listed = inspect(module_daemon.compat_url, "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr
    names = sorted(tool["name"] for tool in first_json(listed.stdout)["tools"])
    assert names == sorted(NAMING.wire(t.name) for t in TOOLS)

    answered = inspect(module_daemon.compat_url, "--method", "tools/call", "--tool-name", "review_search",
                       "--tool-arg", f"projectId={sample}", "--tool-arg", "q=lock")
    assert answered.returncode == 0, answered.stderr + answered.stdout
    assert first_json(answered.stdout)["structuredContent"]["records"]

    refused = inspect(module_daemon.compat_url, "--method", "tools/call", "--tool-name", "project_list",
                      "--tool-arg", "x=1")
    assert refused.returncode == INSPECTOR_TOOL_REFUSED_EXIT
    assert "Invalid arguments for project_list: unknown key `x` is not accepted" in refused.stdout
