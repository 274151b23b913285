"""A compiled accept/reject check for evidence records, for the bulk path of `theurian review build`.

`jsonschema` costs about five times an orjson parse per record (`design/DEPENDENCIES.md`: 210 µs against
43 µs), which would make validation, not loading, the cost of a build. This module compiles the schemas under
`schemas/evidence/` once into nested Python closures that answer only "valid or not" — measured at a few µs
per record (docs/review-search.md). A record it rejects is handed to `evidence.validation.validate_record`
for the message, so the reported reason is exactly what the lake's own reader would say.

It understands only the keywords those schemas use. A schema that gains any other keyword fails to compile
(`UnsupportedSchema`) rather than being checked loosely; a test compiles every evidence schema and checks
agreement with `jsonschema` record by record.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Final

import jsonschema

import schemas
from theurian.errors import TheurianError

Check = Callable[[Any], bool]

_ANNOTATIONS: Final = frozenset({"$schema", "$id", "title", "description", "$defs", "$comment", "examples"})
_TYPES: Final[Mapping[str, Check]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


class UnsupportedSchema(TheurianError):  # noqa: N818 - it names what the schema is
    """A schema uses a keyword this compiler does not implement."""


@cache
def record_check(kind: str) -> Check:
    """The compiled check for records of `kind` (`<kind>.schema.json` in `schemas/evidence/`)."""
    document = schemas.load("evidence", f"{kind}.schema.json")
    return _compile(document, document)


def _compile(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
    unknown = set(node) - _ANNOTATIONS - set(_KEYWORDS)
    if unknown:
        raise UnsupportedSchema(f"evidence schema keyword(s) {sorted(unknown)} are not compiled")
    built = [_KEYWORDS[key](node, root) for key in node if key in _KEYWORDS]
    checks = [check for check in built if check is not None]
    if len(checks) == 1:
        return checks[0]
    return lambda value: all(check(value) for check in checks)


def _type(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
    names = node["type"] if isinstance(node["type"], list) else [node["type"]]
    tests = [_TYPES[name] for name in names]
    return lambda value: any(test(value) for test in tests)


def _const(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
    expected = node["const"]
    return lambda value: _json_equal(value, expected)


def _enum(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
    options = list(node["enum"])
    return lambda value: any(_json_equal(value, option) for option in options)


def _json_equal(a: Any, b: Any) -> bool:
    # JSON equality as jsonschema decides it: true is not 1, and 1 equals 1.0.
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _pattern(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
    search = re.compile(node["pattern"]).search
    return lambda value: not isinstance(value, str) or search(value) is not None


def _bound(name: str, holds: Callable[[Any, Any], bool]) -> Callable[..., Check]:
    def build(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
        limit = node[name]
        return lambda value: not _TYPES["number"](value) or holds(value, limit)

    return build


def _length(name: str, holds: Callable[[int, int], bool]) -> Callable[..., Check]:
    def build(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
        limit = node[name]
        return lambda value: not isinstance(value, str) or holds(len(value), limit)

    return build


def _format(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check | None:
    checker = jsonschema.FormatChecker()
    name = node["format"]
    if name not in checker.checkers:
        return None  # jsonschema does not check it either: the two must agree
    return lambda value: checker.conforms(value, name)


def _required(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
    names = tuple(node["required"])
    return lambda value: not isinstance(value, dict) or all(name in value for name in names)


def _properties(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
    compiled = {name: _compile(sub, root) for name, sub in node["properties"].items()}

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        return all(test(value[name]) for name, test in compiled.items() if name in value)

    return check


def _additional(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check | None:
    if node["additionalProperties"] is not False:
        raise UnsupportedSchema("only additionalProperties: false is compiled")
    allowed = frozenset(node.get("properties", {}))
    return lambda value: not isinstance(value, dict) or allowed.issuperset(value)


def _items(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
    test = _compile(node["items"], root)
    return lambda value: not isinstance(value, list) or all(test(item) for item in value)


def _ref(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
    reference = node["$ref"]
    if not reference.startswith("#/$defs/"):
        raise UnsupportedSchema(f"only local $defs references are compiled, not {reference}")
    target = root["$defs"][reference.removeprefix("#/$defs/")]
    compiled: list[Check] = []

    def check(value: Any) -> bool:
        if not compiled:  # compiled on first use, so a recursive definition cannot recurse at compile time
            compiled.append(_compile(target, root))
        return compiled[0](value)

    return check


def _one_of(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
    tests = [_compile(sub, root) for sub in node["oneOf"]]
    return lambda value: sum(1 for test in tests if test(value)) == 1


def _any_of(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
    tests = [_compile(sub, root) for sub in node["anyOf"]]
    return lambda value: any(test(value) for test in tests)


_KEYWORDS: Final[Mapping[str, Callable[[Mapping[str, Any], Mapping[str, Any]], Check | None]]] = {
    "type": _type,
    "const": _const,
    "enum": _enum,
    "pattern": _pattern,
    "minimum": _bound("minimum", lambda v, limit: v >= limit),
    "maximum": _bound("maximum", lambda v, limit: v <= limit),
    "minLength": _length("minLength", lambda n, limit: n >= limit),
    "maxLength": _length("maxLength", lambda n, limit: n <= limit),
    "format": _format,
    "required": _required,
    "properties": _properties,
    "additionalProperties": _additional,
    "items": _items,
    "$ref": _ref,
    "oneOf": _one_of,
    "anyOf": _any_of,
}
