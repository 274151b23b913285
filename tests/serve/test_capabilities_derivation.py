"""system.capabilities derives every flag from the registered tools: with all tools registered, a hard-coded
`true` would pass the end-to-end test, so the flags are pinned here over smaller sets."""

import pytest

from serve.tooling import Tool, ToolKind
from serve.tools import registered_tools
from serve.tools.system import REVIEW_INGESTION_SCOPE, capabilities_of, system_tools

ALL = {tool.name: tool for tool in registered_tools()}
NOTHING = {"reviewFindings": False, "reviewSimilarity": False, "reviewConcerns": False,
           "reviewIngestion": False, "reviewIngestionScope": None, "writeTools": False,
           "traceability": False, "sensitivityEnforcement": False}


def test_with_only_the_system_tools_every_flag_is_off() -> None:
    assert capabilities_of(system_tools([])) == NOTHING


@pytest.mark.parametrize("name, expected", [
    ("review.findings", {"reviewFindings": True}),
    ("review.findSimilar", {"reviewSimilarity": True}),
    ("review.listConcerns", {"reviewConcerns": True}),
    ("review.search", {"reviewIngestion": True, "reviewIngestionScope": REVIEW_INGESTION_SCOPE}),
    ("knowledge.proposeChange", {"writeTools": True}),
    ("knowledge.search", {"sensitivityEnforcement": True}),
])
def test_each_flag_turns_on_with_the_tool_that_backs_it_and_no_other(name: str, expected: dict) -> None:
    assert capabilities_of([ALL[name]]) == NOTHING | expected


def test_write_tools_follows_the_kind_not_the_name() -> None:
    reader = ALL["knowledge.get"]
    as_writer = Tool(name=reader.name, description="", input_schema=reader.input_schema, output_schema="",
                     handler=reader.handler, project_scoped=True, kind=ToolKind.WRITE_INTENT)
    assert capabilities_of([as_writer])["writeTools"] is True
