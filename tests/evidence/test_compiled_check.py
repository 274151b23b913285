"""The compiled evidence check agrees with jsonschema record by record, and refuses to compile what it cannot
check."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence.compiled_check import UnsupportedSchema, _compile, record_check
from evidence.records import KINDS
from evidence.validation import _validator as jsonschema_validator
from tests.projection.review_records import _sample

# Integral floats (1.0, -0.0, 2.0**63) are integers to JSON Schema; non-integral ones, inf and nan are not.
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 2**64), st.integers(-3, 2**64).map(float),
                   st.sampled_from([0.5, 1.5, -0.0, float("inf"), float("nan"), 2.0**63]),
                   st.text(max_size=5), st.just("LEFT"),
                   st.just("2026-05-02T10:00:00Z"), st.lists(st.integers(), max_size=2),
                   st.dictionaries(st.sampled_from(["id", "login", "type", "x"]), st.text(max_size=3), max_size=3))


def _jsonschema_accepts(record: dict[str, Any]) -> bool:
    # jsonschema itself, never validate_record: that one now asks the compiled check first.
    kind = record.get("kind")
    if kind not in KINDS:
        return False
    return jsonschema_validator(f"{kind}.schema.json").is_valid(record)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(KINDS), data=st.data())
def test_the_compiled_check_accepts_exactly_what_jsonschema_accepts(kind: str, data: st.DataObject) -> None:
    record = copy.deepcopy(_sample(kind))
    assert record_check(kind)(record) is True
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(record)
        path = data.draw(st.sampled_from(paths))
        parent = record
        for step in path[:-1]:
            parent = parent[step]
        action = data.draw(st.sampled_from(["set", "delete", "add"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[data.draw(st.sampled_from(["extra", "body", "id"]))] = data.draw(VALUES)
        else:
            parent[path[-1]] = data.draw(VALUES)
    assert record_check(kind)(record) is _jsonschema_accepts(record)


def test_a_schema_keyword_the_compiler_does_not_implement_fails_to_compile() -> None:
    with pytest.raises(UnsupportedSchema):
        _compile({"type": "string", "uniqueItems": True}, {})
    with pytest.raises(UnsupportedSchema):
        _compile({"additionalProperties": {"type": "string"}}, {})


def test_an_integral_float_is_an_integer_and_a_bool_never_is() -> None:
    record = copy.deepcopy(_sample("pull-request"))
    record["pullRequest"] = 1.0
    assert _jsonschema_accepts(record)
    assert record_check("pull-request")(record)
    record["pullRequest"] = True
    assert not _jsonschema_accepts(record) and not record_check("pull-request")(record)
    record["pullRequest"] = 1.5
    assert not _jsonschema_accepts(record) and not record_check("pull-request")(record)
