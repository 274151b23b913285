"""The input schemas tools/list serves are flattened (every accepted key in `properties`, no `$ref`, no
`unevaluatedProperties`) and accept and refuse exactly what the published schemas do, for every registered tool."""

from typing import Any

import jsonschema
import pytest
from referencing import Registry

from serve.errors import SchemaFlattenError
from serve.flat_schema import flatten, flattened_input_schema
from serve.tools import registered_tools
from tests.support.schema_agreement import assert_same_verdicts, compiled, published_validator

TOOLS = registered_tools()


@pytest.mark.parametrize("tool", TOOLS, ids=[t.name for t in TOOLS])
def test_every_accepted_key_is_a_top_level_property_and_nothing_is_left_to_resolve(tool: Any) -> None:
    flat = flattened_input_schema(tool.input_schema)
    text = repr(flat)
    assert "$ref" not in text and "unevaluatedProperties" not in text and "$defs" not in text
    assert flat["additionalProperties"] is False
    validator = published_validator(tool.input_schema)
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
    assert_same_verdicts(published_validator(tool.input_schema), compiled(flat), flat)


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
