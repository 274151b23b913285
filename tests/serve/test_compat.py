"""The compat route's naming: every registered tool gets a strict-client name, refusals name the tool as the
route does, and a value a caller sent is quoted back as sent."""

import asyncio
from typing import Any

import pytest
from mcp import Client

from serve.compat import STRICT_TOOL_NAME, canonical_naming, compat_naming
from serve.errors import ToolNameError
from serve.server import build_server
from serve.tooling import ServeSettings
from serve.tools import registered_tools

NAMES = [tool.name for tool in registered_tools()]


def test_every_registered_tool_has_a_strict_client_name_and_the_contract_names_stay_on_the_default() -> None:
    naming = compat_naming(NAMES)
    assert all(STRICT_TOOL_NAME.fullmatch(naming.wire(name)) for name in NAMES)
    assert naming.wire("review.search") == "review_search"
    assert naming.canonical("review_search") == "review.search" and naming.canonical("review.search") is None
    assert [canonical_naming(NAMES).wire(name) for name in NAMES] == NAMES


@pytest.mark.parametrize("names", [["a.b", "a_b"], ["x." + "y" * 63]])
def test_a_name_with_no_strict_form_or_two_names_sharing_one_stop_the_start(names: list[str]) -> None:
    with pytest.raises(ToolNameError):
        compat_naming(names)


def test_a_name_is_exactly_sixty_four_characters_at_most() -> None:
    assert compat_naming(["x." + "y" * 62]).wire("x." + "y" * 62) == "x_" + "y" * 62


def test_our_words_are_renamed_and_a_quoted_value_is_left_as_sent() -> None:
    naming = compat_naming(NAMES)
    text = "review.search: `q` 'review.search' is bounded; project.list names them. `review.search` \"review.search\""
    assert naming.in_text(text) == (
        "review_search: `q` 'review.search' is bounded; project_list names them. `review.search` \"review.search\"")


def _through(naming_of: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    tools = registered_tools()
    server = build_server(ServeSettings("internal"), tools, naming_of([t.name for t in tools]))

    async def scenario() -> list[Any]:
        async with Client(server) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return asyncio.run(scenario())


def test_a_refusal_names_the_tool_the_caller_used() -> None:
    compat, canonical = (_through(naming, [(name, {"extra": 1})])[0] for naming, name in
                         ((compat_naming, "project_list"), (canonical_naming, "project.list")))
    assert compat.is_error and compat.content[0].text.startswith("Invalid arguments for project_list: unknown key")
    assert canonical.content[0].text.startswith("Invalid arguments for project.list: unknown key")
    unregistered = _through(compat_naming, [("review_search", {"projectId": "nope"})])[0]
    assert unregistered.is_error and "project_list names the registered projects" in unregistered.content[0].text


def test_the_compat_capabilities_name_the_tools_as_the_route_serves_them() -> None:
    answer = _through(compat_naming, [("system_capabilities", {})])[0]
    assert answer.structured_content["tools"] == sorted(name.replace(".", "_") for name in NAMES)
    assert "review.search" not in answer.content[0].text
