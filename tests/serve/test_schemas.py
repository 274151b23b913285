"""The published schemas: valid draft 2020-12, one input schema per contract tool, context shared by $ref, and
each registered tool's schema key set equal to its handler's parameters."""

import inspect
from typing import Any

import jsonschema
import pytest

import schemas
from projection.findings_store import MAX_FINDING_TEXT_CHARS
from serve.tooling import CONTEXT_KEYS, ServeSettings
from serve.tools import registered_tools
from serve.tools.knowledge import MAX_QUERY_CHARS
from serve.tools.review_similar import MAX_SITUATION_CHARS
from serve.validation import InputValidator, bundled_input_schema

CONTRACT_TOOLS = {
    "knowledge.search": "knowledge-search-input.schema.json",
    "knowledge.get": "knowledge-get-input.schema.json",
    "knowledge.status": "knowledge-status-input.schema.json",
    "knowledge.proposeChange": "knowledge-propose-change-input.schema.json",
    "knowledge.generateMigrationDraft": "knowledge-generate-migration-draft-input.schema.json",
    "project.list": "project-list-input.schema.json",
    "review.findSimilar": "review-find-similar-input.schema.json",
    "review.findings": "review-findings-input.schema.json",
    "review.generateKnowledgeCandidate": "review-generate-knowledge-candidate-input.schema.json",
    "review.listConcerns": "review-list-concerns-input.schema.json",
    "review.search": "review-search-input.schema.json",
    "system.capabilities": "system-capabilities-input.schema.json",
}
NO_PROJECT = {"project.list", "system.capabilities"}


@pytest.mark.parametrize("family", ["mcp", "evidence", "knowledge"])
def test_every_published_schema_is_valid_draft_2020_12(family: str) -> None:
    try:
        names = schemas.names(family)
    except FileNotFoundError:
        names = []
    for name in names:
        document = schemas.load(family, name)
        jsonschema.Draft202012Validator.check_schema(document)
        assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema", name


def test_all_ten_contract_tools_have_an_input_schema() -> None:
    published = set(schemas.names("mcp"))
    assert set(CONTRACT_TOOLS.values()) <= published


@pytest.mark.parametrize("tool, name", sorted(CONTRACT_TOOLS.items()))
def test_project_scoped_tools_share_the_tool_context_by_ref_and_others_take_nothing(tool: str, name: str) -> None:
    document = schemas.load("mcp", name)
    if tool in NO_PROJECT:
        assert document["properties"] == {} and document["additionalProperties"] is False
    else:
        assert document["$ref"] == "tool-context.schema.json"
        assert document["unevaluatedProperties"] is False
        assert "projectId" in document["required"]
        assert not CONTEXT_KEYS & set(document["properties"])  # restated nowhere: one definition


def test_the_tool_context_requires_project_id_and_admits_the_three_unread_fields() -> None:
    context = schemas.load("mcp", "tool-context.schema.json")
    assert set(context["properties"]) == CONTEXT_KEYS
    assert context["required"] == ["projectId"]


def test_each_registered_tool_has_schemas_and_its_key_set_equals_its_handler_parameters() -> None:
    published = set(schemas.names("mcp"))
    for tool in registered_tools():
        assert CONTRACT_TOOLS[tool.name] == tool.input_schema
        assert tool.output_schema in published, tool.name
        properties = set(schemas.load("mcp", tool.input_schema)["properties"])
        parameters = inspect.signature(tool.handler).parameters
        handler_keys = {name for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
        assert properties == handler_keys, tool.name
        positional = [p for p in parameters.values() if p.kind is not inspect.Parameter.KEYWORD_ONLY]
        assert [p.name for p in positional] == ["call"], tool.name


def test_the_published_listing_schema_is_self_contained_and_validates_like_the_source() -> None:
    validator = InputValidator()
    for name in CONTRACT_TOOLS.values():
        bundled = bundled_input_schema(name)
        assert "tool-context.schema.json" not in str(bundled)
        checker = jsonschema.Draft202012Validator(bundled)
        for arguments in ({}, {"projectId": "p"}, {"projectId": "p", "zzz": 1}, {"projectId": 3}):
            source_ok = validator.problem("t", name, arguments) is None
            assert checker.is_valid(arguments) == source_ok, (name, arguments)


def test_serving_settings_carry_only_the_ceiling() -> None:
    assert ServeSettings("internal").disclosure_ceiling == "internal"


@pytest.mark.parametrize(("schema_name", "key", "bound"), [
    ("knowledge-search-input.schema.json", "query", MAX_QUERY_CHARS),
    ("review-find-similar-input.schema.json", "situation", MAX_SITUATION_CHARS),
])
def test_a_bound_the_schema_checks_at_the_wire_is_the_constant_the_tool_module_names(
        schema_name: str, key: str, bound: int) -> None:
    assert schemas.load("mcp", schema_name)["properties"][key]["maxLength"] == bound


def test_knowledge_search_echoes_its_query_under_the_bound_it_refuses_past_and_finding_text_is_cut_at_it() -> None:
    # The contract derives review.findings' findingText cut from the query bound (one bound for the longest string
    # searched for and the longest finding handed back); projection cannot import serve, so the agreement is pinned.
    response = schemas.load("mcp", "knowledge-search-response.schema.json")
    assert response["properties"]["query"]["maxLength"] == MAX_QUERY_CHARS == MAX_FINDING_TEXT_CHARS


# review.findSimilar serves review.search's record (one shaper, `serve.tools.review.shaped`) plus its scores; each
# output schema stays self-contained, so the shared part is restated there and pinned equal here. These three it
# narrows to what it compares (no pull requests; a thread's comment or a submission's body).
_NARROWED_BY_FIND_SIMILAR = ("kind", "excerpt", "excerptChannel")


def _without_description(definition: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in definition.items() if key != "description"}


def test_find_similar_restates_review_search_record_definition_exactly_where_it_does_not_narrow_it() -> None:
    search = schemas.load("mcp", "review-search-response.schema.json")["$defs"]
    similar = schemas.load("mcp", "review-find-similar-response.schema.json")["$defs"]
    assert similar["optionalText"] == search["optionalText"]
    record, restated = search["record"], similar["record"]
    assert restated["type"] == record["type"] and restated["additionalProperties"] == record["additionalProperties"]
    assert restated["required"][:len(record["required"])] == record["required"]
    for key, definition in record["properties"].items():
        if key not in _NARROWED_BY_FIND_SIMILAR:
            assert restated["properties"][key] == definition, key
    assert _without_description(restated["properties"]["excerpt"]) == _without_description(
        record["properties"]["excerpt"])
    for key in ("kind", "excerptChannel"):
        assert set(restated["properties"][key]["enum"]) < set(record["properties"][key]["enum"]), key
