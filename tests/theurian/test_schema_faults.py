"""A schema fault is described by the value's JSON type and size, never by the value."""

import pytest

from theurian.schema_faults import json_kind


@pytest.mark.parametrize(("value", "kind"), [
    (None, "null"), (True, "a boolean"), (7, "an integer"), (7.5, "a number"), ("", "a string of 0 characters"),
    ("x", "a string of 1 character"), ("SECRET", "a string of 6 characters"), ([1], "an array of 1 item"),
    ({"SECRET": 1, "b": 2}, "an object of 2 keys"),
])
def test_a_value_is_named_by_its_json_type_and_size(value: object, kind: str) -> None:
    assert json_kind(value) == kind
