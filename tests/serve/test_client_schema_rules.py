"""The schemas tools/list serves pass the checks the major MCP clients make before they register or call a tool.

Each rule restates, as a predicate, what that client's published code or its issue tracker shows it doing with
a tool's schema (docs/clients.md, "Tool schemas": the sources and what was measured). The MCP Inspector's own
portability report is run for real against a daemon in tests/e2e/test_third_party_client.py.
"""

from collections.abc import Iterator
from typing import Any

import pytest

from serve.compat import canonical_naming
from serve.flat_schema import SCHEMA_MAPS, VALUE_KEYWORDS
from serve.listing import listed_tool
from serve.tools import registered_tools

TOOLS = registered_tools()
NAMING = canonical_naming(t.name for t in TOOLS)
LISTED = {tool.name: listed_tool(tool, NAMING) for tool in TOOLS}
# VS Code's Copilot normalizer drops these at the root of an input schema (toolSchemaNormalizer.ts).
_ROOT_ONLY_DROPPED = ("oneOf", "anyOf", "allOf", "not", "if", "then", "else")


def _schemas(tool: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "inputSchema", tool.input_schema
    if tool.output_schema is not None:
        yield "outputSchema", tool.output_schema


def _nodes(node: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every subschema of `node` with its path, data keywords skipped."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from _nodes(item, f"{path}[{index}]")
        return
    if not isinstance(node, dict):
        return
    yield path, node
    for keyword, value in node.items():
        if keyword in VALUE_KEYWORDS:  # data, not a schema
            continue
        if keyword in SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                yield from _nodes(sub, f"{path}.{keyword}.{name}")
        elif isinstance(value, dict | list):
            yield from _nodes(value, f"{path}.{keyword}")


def _gemini_cli_has_valid_types(schema: Any) -> bool:
    """gemini-cli's `hasValidTypes` (packages/core/src/tools/mcp-client.ts): a node with no `type` needs anyOf,
    allOf or oneOf branches that each pass; an object's properties and an array's items must pass too. A tool
    that fails is skipped ("missing types in its parameter schema")."""
    if not isinstance(schema, dict):
        return True
    if not schema.get("type"):
        branches = [sub for keyword in ("anyOf", "allOf", "oneOf") for sub in schema.get(keyword, [])]
        if not any(keyword in schema for keyword in ("anyOf", "allOf", "oneOf")):
            return False
        if not all(_gemini_cli_has_valid_types(sub) for sub in branches):
            return False
    if schema.get("type") == "object" and isinstance(schema.get("properties"), dict):
        if not all(_gemini_cli_has_valid_types(sub) for sub in schema["properties"].values()):
            return False
    return not (schema.get("type") == "array" and "items" in schema
                and not _gemini_cli_has_valid_types(schema["items"]))


def _cursor_type_check_refuses(prop: dict[str, Any], value: Any) -> bool:
    """Cursor's MCPHandler check of one top-level argument before the call leaves the client (the source quoted
    in cursor/cursor#3540; cursor/cursor#3778 shows a `type` array refusing every value): `anyOf` branches are
    matched by their `type`, otherwise `type` is compared to the value's JSON type as one string."""
    kind = ("null" if value is None else "array" if isinstance(value, list) else "object" if isinstance(value, dict)
            else "boolean" if isinstance(value, bool) else "number" if isinstance(value, int | float) else "string")
    if "anyOf" in prop:
        return not any((branch.get("type") == "null" and value is None) or branch.get("type") == kind
                       for branch in prop["anyOf"])
    declared = prop.get("type")
    return bool(declared) and kind != declared and not (declared == "integer" and kind == "number")


@pytest.mark.parametrize("name", sorted(LISTED))
def test_no_served_schema_spells_a_type_as_an_array(name: str) -> None:
    # The Gemini function-declaration `parameters` field (an OpenAPI 3.0 subset) takes one `type` per schema,
    # Codex keeps only the first type of an array, and Cursor's argument check compares `type` as one string.
    unions = [f"{which}{path}" for which, schema in _schemas(LISTED[name])
              for path, node in _nodes(schema, "") if isinstance(node.get("type"), list)]
    assert unions == []


@pytest.mark.parametrize("name", sorted(LISTED))
def test_gemini_cli_registers_every_tool(name: str) -> None:
    assert _gemini_cli_has_valid_types(LISTED[name].input_schema)


@pytest.mark.parametrize("name", sorted(LISTED))
def test_vs_code_copilot_reads_every_input_schema_unchanged(name: str) -> None:
    schema = LISTED[name].input_schema
    assert schema["type"] == "object" and isinstance(schema.get("properties"), dict)
    assert not [keyword for keyword in _ROOT_ONLY_DROPPED if keyword in schema]
    assert not [path for path, node in _nodes(schema, "") if node.get("type") == "array" and "items" not in node]
    assert LISTED[name].description  # an empty one is replaced by "No description provided"


def test_cursor_passes_a_nullable_argument_both_as_a_string_and_as_null() -> None:
    # knowledge.proposeChange requires expectedRevision and admits null (a change based on no revision).
    prop = LISTED["knowledge.proposeChange"].input_schema["properties"]["expectedRevision"]
    assert [_cursor_type_check_refuses(prop, value) for value in ("01K2ABCDEFGHJKMNPQRSTVWXYZ0", None, 7)] == [
        False, False, True]


@pytest.mark.parametrize("name", sorted(LISTED))
def test_cursor_refuses_no_argument_value_the_schema_admits_for_its_type(name: str) -> None:
    for key, prop in LISTED[name].input_schema["properties"].items():
        declared = [branch.get("type") for branch in prop.get("anyOf", [])] or prop.get("type", [])
        declared = declared if isinstance(declared, list) else [declared]
        samples = {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {},
                   "null": None}
        for kind in declared:
            if kind in samples:
                assert not _cursor_type_check_refuses(prop, samples[kind]), (key, kind)
