"""Two schemas that must accept and refuse the same instances: a published one and the copy tools/list serves.

`assert_same_verdicts` runs instances through both: a few valid ones drawn from a schema, every one-step bend of
each (each value inside replaced by one value of every JSON type, each key dropped, an unknown key added, each
string and integer nudged by one, each array shortened and given a duplicate), and values at and just past every
bound either side states, so that both sides of the line are reached and agreement means something. Drawing is
what costs (hypothesis-jsonschema builds each document from its schema); bending a drawn document is cheap and
deterministic, so a handful of draws reaches every keyword.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any, Final

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema
from jsonschema.protocols import Validator
from referencing import Registry, Resource

import schemas
from serve.flat_schema import VALUE_KEYWORDS

JSON_TYPES: Final = ("null", "boolean", "integer", "number", "string", "array", "object")
# At least one value of every JSON type, and each type's edge (empty, zero, negative, past signed 64-bit).
PROBES: Final[tuple[Any, ...]] = (None, True, False, 0, -1, 2**63, 1.5, "", "x", [], [None], {}, {"": None})
UNKNOWN_KEY: Final = "notDeclaredByAnySchema"
# Draws per schema: each is bent in every slot, so a few reach what a hundred undrawn ones did.
DRAWS: Final = 8
MAX_BENT_PATHS: Final = 40
DRAWN_MAX_ITEMS: Final = 3


@functools.cache
def _published_registry() -> Registry[Any]:
    documents = [schemas.load("mcp", name) for name in schemas.names("mcp")]
    return Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in documents)


@functools.cache
def published_validator(schema_name: str) -> Validator:
    """A validator of the published `schemas/mcp/<schema_name>`, its `$ref`s to the other schemas resolved
    (built once per schema: a validator is costly to build and reused by every test that reads it)."""
    return compiled(schemas.load("mcp", schema_name), registry=_published_registry())


def compiled(schema: dict[str, Any], *, registry: Registry[Any] | None = None) -> Validator:
    """A validator of `schema` for its declared draft, the schema itself checked first."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema) if registry is None else cls(schema, registry=registry)


def assert_same_verdicts(published: Validator, served: Validator, drawn_from: dict[str, Any], *,
                         draws: int = DRAWS) -> list[tuple[Any, bool]]:
    """Every instance drawn from the schema `drawn_from`, and every bend of it, is valid against both or neither,
    and both verdicts occur.

    Returns each instance checked with its verdict, for a caller that asserts which branches were reached.
    """
    seen: list[tuple[Any, bool]] = []

    @settings(max_examples=draws, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(from_schema(_short_arrays(drawn_from)))
    def agree(instance: Any) -> None:
        for bend in bent(instance):
            _check(bend)

    def _check(instance: Any) -> None:
        verdict = published.is_valid(instance)
        assert served.is_valid(instance) == verdict, instance
        seen.append((instance, verdict))

    agree()
    # The edges do not depend on the draw: placed once, in the first drawn instance (the first one checked).
    for bend in _at_edges(seen[0][0], _edges(drawn_from, published.schema, served.schema)):
        _check(bend)
    assert {verdict for _, verdict in seen} == {True, False}
    return seen


def _short_arrays(schema: Any) -> Any:
    """`schema` with each `maxItems` above DRAWN_MAX_ITEMS lowered to it (where `minItems` allows): every drawn
    instance is still valid against `schema`, and a drawn array of 200 objects no longer costs seconds to draw
    and to validate once per bend."""
    if isinstance(schema, list):
        return [_short_arrays(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    short = {key: value if key in VALUE_KEYWORDS else _short_arrays(value) for key, value in schema.items()}
    if short.get("maxItems", 0) > DRAWN_MAX_ITEMS >= short.get("minItems", 0):
        short["maxItems"] = DRAWN_MAX_ITEMS
    return short


def bent(instance: Any) -> Iterator[Any]:
    """`instance`, then every one-step bend of it (see the module docstring), the whole replaced included."""
    yield instance
    for path in _paths(instance):
        for replacement in (*PROBES, *_nudges(_at(instance, path))):
            yield _with(instance, path, replacement)


def _at_edges(instance: Any, edges: list[Any]) -> Iterator[Any]:
    """Each edge value in place of `instance` and of each of its top-level values."""
    yield from edges
    if isinstance(instance, dict):
        for key in instance:
            for edge in edges:
                yield {**instance, key: edge}


def _edges(*documents: Any) -> list[Any]:
    """Values at and just past every length, numeric and item-count bound stated anywhere in `documents` or in
    a schema they `$ref`: a drawn string rarely lands on a maxLength of 200, and a nudge moves one step from it.
    Both sides' bounds are read, so a bound one side lost is still probed from the other."""
    bounds = {(keyword, value) for document in documents for keyword, value in _bounds(document, "", set())}
    found: list[Any] = []
    for keyword, value in sorted(bounds, key=repr):
        past = 1 if keyword.startswith("max") else -1
        for at in (value, value + past):
            if keyword.endswith("Length"):
                found.append("x" * max(at, 0))
            elif keyword.endswith("Items"):
                found.append([None] * max(at, 0))
            else:
                found.append(at)
    return found


_BOUNDS: Final = ("maxLength", "minLength", "maximum", "minimum", "maxItems", "minItems")


def _bounds(node: Any, base: str, followed: set[str]) -> Iterator[tuple[str, Any]]:
    if isinstance(node, list):
        for item in node:
            yield from _bounds(item, base, followed)
    if not isinstance(node, dict):
        return
    base = node.get("$id", base)
    for key, value in node.items():
        if key in _BOUNDS and isinstance(value, int) and not isinstance(value, bool):
            yield key, value
        elif key == "$ref" and isinstance(value, str) and not value.startswith("#") and value not in followed:
            followed.add(value)
            resolved = _published_registry().resolver(base_uri=base).lookup(value)
            yield from _bounds(resolved.contents, base, followed)
        elif key not in VALUE_KEYWORDS:
            yield from _bounds(value, base, followed)


def _paths(instance: Any) -> list[tuple[Any, ...]]:
    """The path of `instance` and of the values inside it, shallowest first and at most MAX_BENT_PATHS of them.

    An array's first and last items stand for all of them (every `items` here applies to each item alike), and
    the deepest values of a large drawn document are left unbent: the schemas' constraints sit near the top, and
    bending a document costs a validation of the whole of it per bend.
    """
    found: list[tuple[Any, ...]] = []
    level: list[tuple[Any, ...]] = [()]
    while level and len(found) < MAX_BENT_PATHS:
        found += level
        level = [(*path, step) for path in level for step in _steps(_at(instance, path))]
    return found[:MAX_BENT_PATHS]


def _steps(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return list(node)
    if isinstance(node, list):
        return sorted({0, len(node) - 1}) if node else []
    return []


def _nudges(value: Any) -> list[Any]:
    """Values one step from `value`: past a length or numeric bound, or a pattern's anchor, it was at."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value - 1, value + 1]
    if isinstance(value, str):
        return [value + "x", value[1:], "x" + value]
    if isinstance(value, list):
        return [value[1:], [*value, value[0]]] if value else []
    if isinstance(value, dict):
        return [{**value, UNKNOWN_KEY: None}, *({k: v for k, v in value.items() if k != key} for key in value)]
    return []


def _at(instance: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        instance = instance[step]
    return instance


def _with(instance: Any, path: tuple[Any, ...], value: Any) -> Any:
    """`instance` with the value at `path` replaced by `value`: the containers on the path are copied, the rest is
    shared (nothing here writes into an instance, and hypothesis may hand the drawn one to another example)."""
    if not path:
        return value
    step, rest = path[0], path[1:]
    copied = dict(instance) if isinstance(instance, dict) else list(instance)
    copied[step] = _with(instance[step], rest, value)
    return copied
