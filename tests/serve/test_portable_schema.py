"""The schemas tools/list serves spell each `type` array as `anyOf` single-type branches, and accept and refuse
exactly what the published schemas do, input and output, for every registered tool."""

from typing import Any

import jsonschema
import pytest
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

import schemas
from serve.compat import canonical_naming
from serve.flat_schema import SCHEMA_MAPS, VALUE_KEYWORDS, flattened_input_schema
from serve.listing import listed_tool
from serve.portable_schema import split_type_unions
from serve.tools import registered_tools
from tests.support.schema_agreement import JSON_VALUES, assert_same_verdicts, near_misses, published_validator

TOOLS = registered_tools()
NAMING = canonical_naming(t.name for t in TOOLS)
# A whole response drawn from a large output schema is slow to generate (~0.5 s each): the whole-document
# check runs on fewer of them, and every rewritten node is then checked on its own over many values.
OUTPUT_DOCUMENTS = 15


@pytest.mark.parametrize("tool", TOOLS, ids=[t.name for t in TOOLS])
def test_the_served_input_schema_accepts_and_refuses_exactly_what_the_published_one_does(tool: Any) -> None:
    served = listed_tool(tool, NAMING).input_schema
    assert_same_verdicts(published_validator(tool.input_schema), served,
                         near_misses(flattened_input_schema(tool.input_schema)), examples=100)


@pytest.mark.parametrize("tool", TOOLS, ids=[t.name for t in TOOLS])
def test_the_served_output_schema_accepts_and_refuses_exactly_what_the_published_one_does(tool: Any) -> None:
    served = listed_tool(tool, NAMING).output_schema
    assert served is not None
    assert_same_verdicts(published_validator(tool.output_schema), served,
                         near_misses(schemas.load("mcp", tool.output_schema)), examples=OUTPUT_DOCUMENTS)


@pytest.mark.parametrize("tool", TOOLS, ids=[t.name for t in TOOLS])
def test_every_rewritten_node_accepts_and_refuses_exactly_what_its_type_array_did(tool: Any) -> None:
    # A `type`-only anyOf evaluates no property or item, so a node's verdict is all it changes in its document.
    nodes = [node for name in (tool.input_schema, tool.output_schema)
             for node in _union_nodes(schemas.load("mcp", name))]
    for node in nodes:
        values = st.one_of(from_schema(node), JSON_VALUES)
        assert_same_verdicts(jsonschema.Draft202012Validator(node), split_type_unions(node), values, examples=60)


NULLABLE_OBJECT = {"type": ["object", "null"], "properties": {"a": {"type": "integer"}}, "required": ["a"]}


@pytest.mark.parametrize(("published", "instances"), [
    ({"type": ["string", "null"], "maxLength": 2}, ["", "ab", "abc", None, 0, [], {}]),
    (NULLABLE_OBJECT, [None, {"a": 1}, {}, {"a": "x"}, "x", []]),
    ({"type": ["integer"], "minimum": 1}, [1, 0, 1.0, "1", None]),
    ({"type": ["string", "integer"], "anyOf": [{"const": "x"}, {"const": 2}]}, ["x", 2, "y", 3, None]),
    ({"type": "array", "items": {"$ref": "#/$defs/n"}, "$defs": {"n": {"type": ["boolean", "null"]}}},
     [[], [True, None], [1], ["x"], None]),
])
def test_each_type_array_becomes_single_type_branches_with_the_same_verdicts(
        published: dict[str, Any], instances: list[Any]) -> None:
    served = split_type_unions(published)
    assert not [kind for kind in _types(served) if isinstance(kind, list)]
    before, after = jsonschema.Draft202012Validator(published), jsonschema.Draft202012Validator(served)
    assert [after.is_valid(i) for i in instances] == [before.is_valid(i) for i in instances]
    assert len({before.is_valid(i) for i in instances}) == 2


def test_a_nullable_argument_is_served_as_a_string_or_null_and_keeps_its_bound_and_words() -> None:
    [tool] = [t for t in TOOLS if t.name == "knowledge.proposeChange"]
    served = listed_tool(tool, NAMING).input_schema["properties"]["expectedRevision"]
    published = schemas.load("mcp", tool.input_schema)["properties"]["expectedRevision"]
    assert served == {"anyOf": [{"type": "string"}, {"type": "null"}], "maxLength": 64,
                      "description": published["description"]}


def test_data_that_looks_like_a_schema_is_left_as_it_is() -> None:
    document = {"enum": [{"type": ["a", "b"]}], "const": {"type": ["c"]}, "default": {"type": ["d", "e"]}}
    assert split_type_unions(document) == document


def _union_nodes(node: Any) -> list[dict[str, Any]]:
    """Every subschema of `node` whose `type` is an array (data keywords skipped)."""
    if isinstance(node, list):
        return [found for item in node for found in _union_nodes(item)]
    if not isinstance(node, dict):
        return []
    own = [node] if isinstance(node.get("type"), list) else []
    children = [sub for key, value in node.items() if key not in VALUE_KEYWORDS
                for sub in (value.values() if key in SCHEMA_MAPS and isinstance(value, dict) else [value])]
    return own + _union_nodes(children)


def _types(node: Any) -> list[Any]:
    if isinstance(node, list):
        return [kind for item in node for kind in _types(item)]
    if not isinstance(node, dict):
        return []
    own = [node["type"]] if "type" in node else []
    return own + [kind for key, value in node.items() if key not in ("enum", "const") for kind in _types(value)]
