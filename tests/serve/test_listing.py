"""tools/list: a title and MCP annotations on every tool (read-only hint on the read tools, not on the
write-intent ones), and `--read-only` leaves the write-intent tools unregistered."""

import asyncio
from typing import Any

from mcp import Client

from serve.server import build_server
from serve.tooling import ServeSettings, Tool, ToolKind
from serve.tools import registered_tools
from serve.tools.system import capabilities_of

WRITE_INTENT = {"knowledge.proposeChange", "knowledge.generateMigrationDraft", "review.generateKnowledgeCandidate"}


def _listed(settings: ServeSettings) -> list[Any]:
    async def scenario() -> list[Any]:
        async with Client(build_server(settings)) as client:
            return list((await client.list_tools()).tools)

    return asyncio.run(scenario())


def test_every_tool_has_a_title_and_annotations_from_its_kind() -> None:
    listed = _listed(ServeSettings("internal"))
    assert len(listed) == len(registered_tools())
    for tool in listed:
        assert tool.title and tool.annotations is not None and tool.annotations.title == tool.title
        writes = tool.name in WRITE_INTENT
        assert tool.annotations.read_only_hint is (not writes), tool.name
        assert tool.annotations.destructive_hint is False and tool.annotations.open_world_hint is False
        assert tool.annotations.idempotent_hint is (not writes)
    # The contract's seven read tools, review.findSimilar and review.listConcerns.
    assert sum(1 for tool in listed if tool.annotations.read_only_hint) == 9


def test_a_tool_added_with_only_its_kind_gets_a_title_and_its_hints() -> None:
    tool = Tool(name="review.findSimilar", description="", input_schema="", output_schema="",
                handler=lambda call: {}, project_scoped=True)
    assert tool.display_title == "Review: find similar"
    assert tool.hints.read_only is True
    drafting = Tool(name="x.y", description="", input_schema="", output_schema="", handler=lambda call: {},
                    project_scoped=True, kind=ToolKind.WRITE_INTENT)
    assert drafting.hints.read_only is False


def test_read_only_serves_the_nine_read_tools_and_says_no_write_tools() -> None:
    listed = _listed(ServeSettings("internal", read_only=True))
    read_tools = sorted(t.name for t in registered_tools() if t.name not in WRITE_INTENT)
    assert sorted(tool.name for tool in listed) == read_tools
    assert len(listed) == 9
    assert capabilities_of(registered_tools(read_only=True))["writeTools"] is False
    assert capabilities_of(registered_tools())["writeTools"] is True
