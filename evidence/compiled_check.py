"""A compiled accept/reject check for evidence records: the fast path of every place that validates records
(`evidence.validation.validate_record`, so the ingest's writes and the lake's reads, and `theurian review build`).

`jsonschema` costs about five times an orjson parse per record (`design/DEPENDENCIES.md`: 210 µs against
43 µs), which would make validation, not loading, the cost of a build. This module compiles the schemas under
`schemas/evidence/` once into Python source — one flat function per schema node, each a run of
`if not <test>: return False` — and `exec`s it, so checking a record costs a few dict lookups and isinstance
calls per field rather than a tree of closures (docs/review-search.md has the figures). It answers only
"valid or not"; a record it rejects is re-checked with `jsonschema` for the message, so the reported reason names
the failing place exactly as before.

It understands only the keywords those schemas use. A schema that gains any other keyword fails to compile
(`UnsupportedSchema`) rather than being checked loosely; a test compiles every evidence schema and checks
agreement with `jsonschema` record by record. No schema text is ever spliced into the source: every constant,
pattern and name reaches the generated code through `repr` or a namespace slot.
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
_KEYWORDS: Final = frozenset({
    "type", "const", "enum", "pattern", "minimum", "maximum", "minLength", "maxLength", "format", "required",
    "properties", "additionalProperties", "items", "$ref", "oneOf", "anyOf",
})
# JSON types as Python tests of `v`; a bool is an int to Python and never a number to JSON Schema. An integral
# float (1.0) is an integer to JSON Schema, exactly as jsonschema's type checker decides it (`float.is_integer`:
# never inf or nan).
_TYPES: Final[Mapping[str, str]] = {
    "object": "isinstance(v, dict)",
    "array": "isinstance(v, list)",
    "string": "isinstance(v, str)",
    "integer": "((isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()))",
    "number": "(isinstance(v, (int, float)) and not isinstance(v, bool))",
    "boolean": "isinstance(v, bool)",
    "null": "v is None",
}
_NUMBER: Final = _TYPES["number"]


class UnsupportedSchema(TheurianError):  # noqa: N818 - it names what the schema is
    """A schema uses a keyword this compiler does not implement."""


@cache
def record_check(kind: str) -> Check:
    """The compiled check for records of `kind` (`<kind>.schema.json` in `schemas/evidence/`)."""
    document = schemas.load("evidence", f"{kind}.schema.json")
    return _compile(document, document)


def _compile(node: Mapping[str, Any], root: Mapping[str, Any]) -> Check:
    """The check for `node`, whose `$ref`s resolve against `root`.

    Raises:
        UnsupportedSchema: a keyword (anywhere reachable) this compiler does not implement.
    """
    unit = _Unit(root)
    entry = unit.function(node)
    namespace: dict[str, Any] = dict(unit.slots)
    exec("\n".join(unit.lines), namespace)  # noqa: S102 - our own generated source, no schema text in it
    check: Check = namespace[entry]
    return check


def _json_equal(a: Any, b: Any) -> bool:
    # JSON equality as jsonschema decides it: true is not 1, and 1 equals 1.0.
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)


class _Unit:
    """The source being generated: its lines, and the namespace slots its constants live in."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.lines: list[str] = []
        self.slots: dict[str, Any] = {"_json_equal": _json_equal}
        self.refs: dict[str, str] = {}  # $defs name -> its function, named before its body is generated

    def slot(self, value: Any) -> str:
        name = f"_c{len(self.slots)}"
        self.slots[name] = value
        return name

    def function(self, node: Mapping[str, Any]) -> str:
        unknown = set(node) - _ANNOTATIONS - _KEYWORDS
        if unknown:
            raise UnsupportedSchema(f"evidence schema keyword(s) {sorted(unknown)} are not compiled")
        name = f"_f{len(self.slots)}"
        self.slots[name] = None  # reserve the name; `exec` defines it
        body: list[str] = []
        for key in node:
            if key in _KEYWORDS:
                body += getattr(self, "k_" + key.lstrip("$"))(node)
        self.lines += [f"def {name}(v):", *(f"    {line}" for line in body), "    return True"]
        return name

    def k_type(self, node: Mapping[str, Any]) -> list[str]:
        names = node["type"] if isinstance(node["type"], list) else [node["type"]]
        return [f"if not ({' or '.join(_TYPES[n] for n in names)}): return False"]

    def k_const(self, node: Mapping[str, Any]) -> list[str]:
        return [f"if not _json_equal(v, {self.slot(node['const'])}): return False"]

    def k_enum(self, node: Mapping[str, Any]) -> list[str]:
        options = list(node["enum"])
        if all(option is None or isinstance(option, str) for option in options):
            strings = self.slot(frozenset(option for option in options if option is not None))
            null = "v is None or " if None in options else ""
            return [f"if not ({null}(type(v) is str and v in {strings})): return False"]
        return [f"if not any(_json_equal(v, o) for o in {self.slot(options)}): return False"]

    def k_pattern(self, node: Mapping[str, Any]) -> list[str]:
        search = self.slot(re.compile(node["pattern"]).search)
        return [f"if isinstance(v, str) and {search}(v) is None: return False"]

    def k_minimum(self, node: Mapping[str, Any]) -> list[str]:
        return [f"if {_NUMBER} and not v >= {self.slot(node['minimum'])}: return False"]

    def k_maximum(self, node: Mapping[str, Any]) -> list[str]:
        return [f"if {_NUMBER} and not v <= {self.slot(node['maximum'])}: return False"]

    def k_minLength(self, node: Mapping[str, Any]) -> list[str]:  # noqa: N802 - named as the keyword
        return [f"if isinstance(v, str) and not len(v) >= {self.slot(node['minLength'])}: return False"]

    def k_maxLength(self, node: Mapping[str, Any]) -> list[str]:  # noqa: N802 - named as the keyword
        return [f"if isinstance(v, str) and not len(v) <= {self.slot(node['maxLength'])}: return False"]

    def k_format(self, node: Mapping[str, Any]) -> list[str]:
        checker = jsonschema.FormatChecker()
        if node["format"] not in checker.checkers:
            return []  # jsonschema does not check it either: the two must agree
        conforms = self.slot(checker.conforms)
        return [f"if not {conforms}(v, {self.slot(node['format'])}): return False"]

    def k_required(self, node: Mapping[str, Any]) -> list[str]:
        names = self.slot(frozenset(node["required"]))
        return [f"if isinstance(v, dict) and not {names}.issubset(v): return False"]

    def k_properties(self, node: Mapping[str, Any]) -> list[str]:
        lines = ["if isinstance(v, dict):"]
        for key, sub in node["properties"].items():
            test, name = self.function(sub), self.slot(key)
            lines.append(f"    if {name} in v and not {test}(v[{name}]): return False")
        return lines if len(lines) > 1 else []

    def k_additionalProperties(self, node: Mapping[str, Any]) -> list[str]:  # noqa: N802 - named as the keyword
        if node["additionalProperties"] is not False:
            raise UnsupportedSchema("only additionalProperties: false is compiled")
        allowed = self.slot(frozenset(node.get("properties", {})))
        return [f"if isinstance(v, dict) and not {allowed}.issuperset(v): return False"]

    def k_items(self, node: Mapping[str, Any]) -> list[str]:
        test = self.function(node["items"])
        return ["if isinstance(v, list):", "    for x in v:", f"        if not {test}(x): return False"]

    def k_ref(self, node: Mapping[str, Any]) -> list[str]:
        reference = node["$ref"]
        if not reference.startswith("#/$defs/"):
            raise UnsupportedSchema(f"only local $defs references are compiled, not {reference}")
        target = reference.removeprefix("#/$defs/")
        if target not in self.refs:
            # Named before its body is generated, so a recursive definition calls itself rather than recursing
            # at compile time; the call resolves when the function runs.
            self.refs[target] = f"_f{len(self.slots)}"
            assert self.function(self.root["$defs"][target]) == self.refs[target]
        return [f"if not {self.refs[target]}(v): return False"]

    def k_oneOf(self, node: Mapping[str, Any]) -> list[str]:  # noqa: N802 - named as the keyword
        tests = [self.function(sub) for sub in node["oneOf"]]
        return [f"if ({' + '.join(f'(1 if {t}(v) else 0)' for t in tests)}) != 1: return False"]

    def k_anyOf(self, node: Mapping[str, Any]) -> list[str]:  # noqa: N802 - named as the keyword
        tests = [self.function(sub) for sub in node["anyOf"]]
        return [f"if not ({' or '.join(f'{t}(v)' for t in tests)}): return False"]
