"""The input schemas tools/list serves are flattened (every accepted key in `properties`, no `$ref`, no
`unevaluatedProperties`) and accept and refuse exactly what the published schemas do, for every registered tool."""

from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from referencing import Registry, Resource

import schemas
from serve.errors import SchemaFlattenError
from serve.flat_schema import flatten, flattened_input_schema
from serve.tools import registered_tools

TOOLS = registered_tools()
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _published_validator(schema_name: str) -> jsonschema.Draft202012Validator:
    documents = [schemas.load("mcp", name) for name in schemas.names("mcp")]
    registry: Registry[Any] = Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in documents)
    return jsonschema.Draft202012Validator(schemas.load("mcp", schema_name), registry=registry)


def _near_misses(flat: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Valid arguments bent one way or another: a key dropped, an unknown key added, a value replaced."""
    keys = sorted(flat.get("properties", {}))
    valid = from_schema(flat)
    dropped = valid.flatmap(lambda a: st.sampled_from(sorted(a) or [""]).map(
        lambda k: {x: v for x, v in a.items() if x != k}))
    added = st.tuples(valid, st.text(min_size=1, max_size=8), JSON_VALUES).map(lambda t: {**t[0], t[1]: t[2]})
    replaced = st.tuples(valid, st.sampled_from(keys or ["x"]), JSON_VALUES).map(lambda t: {**t[0], t[1]: t[2]})
    loose = st.dictionaries(st.sampled_from(keys or ["x"]), JSON_VALUES, max_size=len(keys) + 1)
    return st.one_of(valid, dropped, added, replaced, loose, JSON_VALUES)


@pytest.mark.parametrize("tool", TOOLS, ids=[t.name for t in TOOLS])
def test_every_accepted_key_is_a_top_level_property_and_nothing_is_left_to_resolve(tool: Any) -> None:
    flat = flattened_input_schema(tool.input_schema)
    text = repr(flat)
    assert "$ref" not in text and "unevaluatedProperties" not in text and "$defs" not in text
    assert flat["additionalProperties"] is False
    validator = _published_validator(tool.input_schema)
    for key in flat["properties"]:  # each listed key is one the published schema accepts
        assert not any(e.validator in ("unevaluatedProperties", "additionalProperties")
                       for e in validator.iter_errors({key: None}))
    jsonschema.Draft202012Validator.check_schema(flat)


def test_a_project_scoped_schema_lists_project_id_where_clients_read_it() -> None:
    flat = flattened_input_schema("knowledge-status-input.schema.json")
    assert sorted(flat["properties"]) == ["agentId", "projectId", "snapshotId", "taskId"]
    assert flat["required"] == ["projectId"]
    assert flat["properties"]["projectId"]["maxLength"] == 200


@pytest.mark.parametrize("tool", TOOLS, ids=[t.name for t in TOOLS])
def test_the_flattened_schema_accepts_and_refuses_exactly_what_the_published_one_does(tool: Any) -> None:
    flat = flattened_input_schema(tool.input_schema)
    published = _published_validator(tool.input_schema)
    served = jsonschema.Draft202012Validator(flat)
    outcomes: set[bool] = set()

    @settings(max_examples=150, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(_near_misses(flat))
    def agree(arguments: Any) -> None:
        verdict = published.is_valid(arguments)
        assert served.is_valid(arguments) == verdict, arguments
        outcomes.add(verdict)

    agree()
    assert outcomes == {True, False}  # both sides of the line were reached, so agreement means something


@pytest.mark.parametrize(("document", "named"), [
    ({"type": "object", "properties": {"a": {}}, "anyOf": [{"required": ["a"]}], "unevaluatedProperties": False},
     "anyOf"),
    ({"type": "object", "allOf": [{"properties": {"a": {}}, "additionalProperties": False}],
      "properties": {"b": {}}}, "additionalProperties"),
    ({"type": "object", "allOf": [{"type": "array"}]}, "type"),
])
def test_a_schema_that_cannot_be_flattened_exactly_is_refused_not_served_looser(document: Any, named: str) -> None:
    with pytest.raises(SchemaFlattenError, match=named):
        flatten(document, Registry(), where="test")


def test_a_key_two_parts_both_declare_keeps_both_constraints() -> None:
    document = {"type": "object", "properties": {"a": {"maxLength": 3}},
                "allOf": [{"properties": {"a": {"minLength": 2}}}], "unevaluatedProperties": False}
    flat = flatten(document, Registry(), where="test")
    validator = jsonschema.Draft202012Validator(flat)
    assert [validator.is_valid({"a": v}) for v in ("x", "xy", "xyzw")] == [False, True, False]
    assert not validator.is_valid({"b": 1})
