"""The schemas tools/list serves spell each `type` array as `anyOf` single-type branches, and accept and refuse
exactly what the published schemas do, input and output, for every registered tool."""

from typing import Any

import jsonschema
import pytest

import schemas
from serve.compat import canonical_naming
from serve.flat_schema import SCHEMA_MAPS, VALUE_KEYWORDS, flattened_input_schema
from serve.listing import listed_tool
from serve.portable_schema import split_type_unions
from serve.tools import registered_tools
from tests.support.schema_agreement import JSON_TYPES, assert_same_verdicts, compiled

TOOLS = registered_tools()
NAMING = canonical_naming(t.name for t in TOOLS)


def _listed_pairs(tool: Any) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(what the served schema was made from, what tools/list serves), input and output. The input is compared
    with the flattened published schema: test_flat_schema proves the two accept and refuse the same inputs."""
    listed = listed_tool(tool, NAMING)
    assert listed.output_schema is not None
    return [(flattened_input_schema(tool.input_schema), listed.input_schema),
            (schemas.load("mcp", tool.output_schema), listed.output_schema)]


@pytest.mark.parametrize("tool", TOOLS, ids=[t.name for t in TOOLS])
def test_the_served_schemas_differ_from_the_published_ones_only_in_how_each_type_array_is_spelled(
        tool: Any) -> None:
    for published, served in _listed_pairs(tool):
        assert not [kind for kind in _types(served) if isinstance(kind, list)]
        assert _branches_as_type_arrays(served) == _one_type_arrays_as_strings(published)


@pytest.mark.parametrize("tool", TOOLS, ids=[t.name for t in TOOLS])
def test_every_respelled_node_accepts_and_refuses_exactly_what_its_type_array_did(tool: Any) -> None:
    # With every other keyword served as published (the test above), the respelled nodes are all that could
    # change a verdict; and a `type`-only anyOf evaluates no property or item, so it changes nothing an
    # unevaluatedProperties elsewhere sees. Node-by-node agreement is then whole-document agreement, without
    # drawing whole documents (a large response schema costs ~0.5 s a document to draw).
    for published, served in _listed_pairs(tool):
        for path in _union_paths(published):
            node = _at(published, path)
            seen = assert_same_verdicts(compiled(node), compiled(_at(served, path)), node)
            checker = jsonschema.Draft202012Validator.TYPE_CHECKER
            for kind in JSON_TYPES:  # every branch was taken, and every type outside them was refused
                of_kind = {verdict for instance, verdict in seen if checker.is_type(instance, kind)}
                assert (kind in node["type"]) in of_kind, (path, kind)


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


def _union_paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every subschema of `node` whose `type` is an array (data keywords skipped)."""
    if isinstance(node, list):
        return [found for index, item in enumerate(node) for found in _union_paths(item, (*path, index))]
    if not isinstance(node, dict):
        return []
    own = [path] if isinstance(node.get("type"), list) else []
    for key, value in node.items():
        if key in VALUE_KEYWORDS:
            continue
        if key in SCHEMA_MAPS and isinstance(value, dict):
            own += [found for name, sub in value.items() for found in _union_paths(sub, (*path, key, name))]
        else:
            own += _union_paths(value, (*path, key))
    return own


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        node = node[step]
    return node


def _branches_as_type_arrays(node: Any) -> Any:
    """`node` with every `anyOf` of bare `{"type": ...}` branches (alone, or as a member of `allOf`) spelled back
    as the `type` array it stands for: what a served schema would be had it never been respelled. (A published
    schema that wrote such an anyOf itself would be read back as a type array too, and fail the comparison.)"""
    if isinstance(node, list):
        return [_branches_as_type_arrays(item) for item in node]
    if not isinstance(node, dict):
        return node
    spelled = {key: value if key in VALUE_KEYWORDS else _branches_as_type_arrays(value)
               for key, value in node.items()}
    if _type_branches(spelled.get("anyOf")):
        spelled["type"] = [branch["type"] for branch in spelled.pop("anyOf")]
    members = spelled.get("allOf", [])
    unions = [m for m in members if isinstance(m, dict) and m.keys() == {"anyOf"} and _type_branches(m["anyOf"])]
    if unions:
        [union] = unions
        spelled["type"] = [branch["type"] for branch in union["anyOf"]]
        spelled["allOf"] = [m for m in members if m is not union]
        if not spelled["allOf"]:
            del spelled["allOf"]
    return spelled


def _type_branches(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(b, dict) and b.keys() == {"type"} and isinstance(b["type"], str) for b in value)


def _one_type_arrays_as_strings(node: Any) -> Any:
    """`node` with each one-member `type` array written as its member, which means the same by definition."""
    if isinstance(node, list):
        return [_one_type_arrays_as_strings(item) for item in node]
    if not isinstance(node, dict):
        return node
    written = {key: value if key in VALUE_KEYWORDS else _one_type_arrays_as_strings(value)
               for key, value in node.items()}
    if isinstance(written.get("type"), list) and len(written["type"]) == 1:
        written["type"] = written["type"][0]
    return written


def _types(node: Any) -> list[Any]:
    if isinstance(node, list):
        return [kind for item in node for kind in _types(item)]
    if not isinstance(node, dict):
        return []
    own = [node["type"]] if "type" in node else []
    return own + [kind for key, value in node.items() if key not in ("enum", "const") for kind in _types(value)]
