"""The daemon's input path through a real server and the SDK's client: one check per call, its admitted arguments
the only ones a handler sees, a refused call answered without running anything, and one log line per call."""

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import pytest
from mcp import Client

from serve.compat import canonical_naming, compat_naming
from serve.server import build_server
from serve.tooling import Call, ServeSettings, Tool
from serve.validation import INLINE_CHECK_CHARS
from tests.serve.test_schemas import CONTRACT_TOOLS

SETTINGS = ServeSettings("internal")


def _recording_search(seen: list[dict[str, Any]]) -> Tool:
    """review.search under its published schema, its handler recording the arguments it is given (no project is
    resolved, so no registry is needed)."""
    def handler(call: Call, **arguments: Any) -> Mapping[str, Any]:
        seen.append(arguments)
        return {"count": 0, "truncated": False, "records": []}

    return Tool(name="review.search", description="", input_schema=CONTRACT_TOOLS["review.search"],
                output_schema="review-search-response.schema.json", handler=handler, project_scoped=False)


def _calls(tool: Tool, wire_name: str, arguments: list[dict[str, Any]], *, compat: bool = False) -> list[Any]:
    naming = (compat_naming if compat else canonical_naming)([tool.name])
    server = build_server(SETTINGS, [tool], naming)

    async def scenario() -> list[Any]:
        async with Client(server) as client:
            return [await client.call_tool(wire_name, each) for each in arguments]

    return asyncio.run(scenario())


@pytest.mark.parametrize(("compat", "wire_name"), [(False, "review.search"), (True, "review_search")])
def test_a_handler_is_given_the_admitted_arguments_an_integral_float_already_an_int(
        compat: bool, wire_name: str) -> None:
    seen: list[dict[str, Any]] = []
    [result] = _calls(_recording_search(seen), wire_name,
                      [{"projectId": "p", "limit": 20.0, "pullRequest": 1e3, "q": "2.0"}], compat=compat)
    assert not result.is_error
    assert seen == [{"limit": 20, "pullRequest": 1000, "q": "2.0"}]
    assert type(seen[0]["limit"]) is int and type(seen[0]["pullRequest"]) is int


def test_a_call_too_large_to_check_on_the_loop_is_checked_on_a_thread_and_admitted_the_same() -> None:
    seen: list[dict[str, Any]] = []
    q = "x" * (INLINE_CHECK_CHARS + 1)
    [result] = _calls(_recording_search(seen), "review.search", [{"projectId": "p", "limit": 7.0, "q": q}])
    assert not result.is_error
    assert seen == [{"limit": 7, "q": q}] and type(seen[0]["limit"]) is int


@pytest.mark.parametrize(("compat", "wire_name"), [(False, "review.search"), (True, "review_search")])
def test_a_refused_call_runs_nothing_and_its_refusal_names_the_tool_as_the_route_does(
        compat: bool, wire_name: str, caplog: pytest.LogCaptureFixture) -> None:
    seen: list[dict[str, Any]] = []
    with caplog.at_level(logging.INFO, logger="theurian.serve"):
        [result] = _calls(_recording_search(seen), wire_name, [{"projectId": "p", "sortBy": "x"}],
                          compat=compat)
    assert result.is_error and seen == []
    assert result.content[0].text == (
        f"Invalid arguments for {wire_name}: unknown key `sortBy` is not accepted by this tool.")
    [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("call ")]
    assert line.startswith("call tool=review.search project=- outcome=invalid ms=")


@pytest.mark.parametrize("length", [100, 101], ids=["at the bound", "one past it"])
def test_an_unknown_tool_name_is_quoted_up_to_its_bound_and_past_it_named_by_its_length(length: int) -> None:
    seen: list[dict[str, Any]] = []
    name = "x" * length
    [result] = _calls(_recording_search(seen), name, [{}])
    shown = repr(name) if length <= 100 else "named by a value of 101 characters"
    assert result.is_error and seen == []
    assert result.content[0].text == (f"No tool {shown} is served by this daemon; tools/list names the callable "
                                      "tools.")


def test_each_answered_call_is_logged_once_with_its_outcome(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="theurian.serve"):
        _calls(_recording_search([]), "review.search", [{"projectId": "p"}, {"projectId": "p", "limit": "x"}])
        _calls(_recording_search([]), "review.nothing", [{}])
    lines = [r.getMessage().rsplit(" ms=", 1)[0] for r in caplog.records if r.getMessage().startswith("call ")]
    assert lines == ["call tool=review.search project=- outcome=ok",
                     "call tool=review.search project=- outcome=invalid",
                     "call tool=(unknown) project=- outcome=invalid"]
