"""Two schemas that must accept and refuse the same instances: a published one and the copy tools/list serves.

`assert_same_verdicts` runs generated instances through both: valid ones drawn from a schema, and the same bent
one way or another (a key dropped or added, a value replaced at the top or anywhere inside), so that both sides
of the line are reached and agreement means something.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from referencing import Registry, Resource

import schemas

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def published_validator(schema_name: str) -> jsonschema.Draft202012Validator:
    """A validator of the published `schemas/mcp/<schema_name>`, its `$ref`s to the other schemas resolved."""
    documents = [schemas.load("mcp", name) for name in schemas.names("mcp")]
    registry: Registry[Any] = Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in documents)
    return jsonschema.Draft202012Validator(schemas.load("mcp", schema_name), registry=registry)


def near_misses(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Instances valid against `schema` (self-contained), and the same bent: a key dropped, an unknown key added,
    a top-level value replaced, a value anywhere inside replaced, or keys and values drawn loosely."""
    keys = sorted(schema.get("properties", {}))
    valid = from_schema(schema)
    dropped = valid.flatmap(lambda a: st.sampled_from(sorted(a) or [""]).map(
        lambda k: {x: v for x, v in a.items() if x != k}) if isinstance(a, dict) else st.just(a))
    added = st.tuples(valid, st.text(min_size=1, max_size=8), JSON_VALUES).map(
        lambda t: {**t[0], t[1]: t[2]} if isinstance(t[0], dict) else t[0])
    replaced = st.tuples(valid, st.sampled_from(keys or ["x"]), JSON_VALUES).map(
        lambda t: {**t[0], t[1]: t[2]} if isinstance(t[0], dict) else t[0])
    inside = st.tuples(valid, st.integers(min_value=0), JSON_VALUES).map(lambda t: _replaced_at(*t))
    loose = st.dictionaries(st.sampled_from(keys or ["x"]), JSON_VALUES, max_size=len(keys) + 1)
    return st.one_of(valid, dropped, added, replaced, inside, loose, JSON_VALUES)


def assert_same_verdicts(published: jsonschema.Draft202012Validator, served: dict[str, Any],
                         instances: st.SearchStrategy[Any], *, examples: int = 150) -> None:
    """Every generated instance is valid against both or neither, and both verdicts occur."""
    check = jsonschema.Draft202012Validator(served)
    outcomes: set[bool] = set()

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(instances)
    def agree(instance: Any) -> None:
        verdict = published.is_valid(instance)
        assert check.is_valid(instance) == verdict, instance
        outcomes.add(verdict)

    agree()
    assert outcomes == {True, False}


def _replaced_at(instance: Any, index: int, value: Any) -> Any:
    """`instance` with the `index`-th (modulo their count) of its nested values replaced by `value`."""
    bent = copy.deepcopy(instance)  # hypothesis may hand the same drawn value to another example
    slots = list(_slots(bent))
    if not slots:
        return value
    container, key = slots[index % len(slots)]
    container[key] = value
    return bent


def _slots(node: Any) -> Any:
    if isinstance(node, dict):
        for key, value in node.items():
            yield node, key
            yield from _slots(value)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield node, index
            yield from _slots(value)
