"""The one wording of a JSON Schema fault, and the one fast-check-then-explain path every schema check takes.

A fault is one line: the place (`operations[0].alias`, or the whole checked value in words: "the arguments", "the
operation", "the record"), the constraint the schema states, and, where it helps, the value described by its JSON
type and size ("a string of 12 characters was sent"). The value itself is never shown: `jsonschema`'s own message
reprints it (a Python repr, cut with no marker), and a refusal that repeats what a caller sent hands a planted
text back to the agent that reads it. Everything shown comes from the schema (bounds, vocabularies, patterns, key
names it declares), from counting, or from the caller's key names, which are escaped (`theurian.text.escaped`) and
past MAX_KEY_CHARS_SHOWN described by their length.

The fast check is jsonschema-rs (2-5 µs a document); `jsonschema` (pure Python, ~130 ms to import) is loaded only
to name the fault of a document the fast check rejected. The two disagree in one known place: jsonschema-rs reads
a `pattern` as JSON Schema says (ECMA-262: `$` is the end, never before a final newline; `\\d` is ASCII), Python's
`re` does not. The caller says which decides (`stricter_decides`); ECMA_DOLLAR_FAULT words the stricter verdict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import jsonschema_rs

from theurian.text import MAX_SHOWN_CHARS, escaped

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

Check: TypeAlias = Callable[[Any], bool]

# A key a caller chose is shown as a name up to the bound any caller's text is (a typo is what a refusal exists to
# make visible); past it by its length.
MAX_KEY_CHARS_SHOWN: Final = MAX_SHOWN_CHARS
# How many keys a fault names (an unknown key, a missing required one) before it counts the rest.
MAX_KEYS_NAMED: Final = 5
ECMA_DOLLAR_FAULT: Final = (
    "a string fails its schema pattern: a trailing newline is not allowed (a pattern is read as ECMA-262, where `$` "
    "does not match before a final newline)"
)
_JSON_TYPES: Final = ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
                      (list, "an array"), (Mapping, "an object"))
_RANGES: Final = frozenset({"maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "multipleOf"})
_BOUNDS: Final = _RANGES | {"maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties",
                            "maxContains", "minContains"}


def json_kind(value: Any) -> str:
    """`value`'s JSON type with its size where it has one ("a string of 12 characters", "an array of 3 items");
    never the value itself."""
    if value is None:
        return "null"
    kind = next((name for python, name in _JSON_TYPES if isinstance(value, python)), "a value JSON does not have")
    if isinstance(value, str):
        return f"{kind} of {_counted(len(value), 'character')}"
    if isinstance(value, list):
        return f"{kind} of {_counted(len(value), 'item')}"
    if isinstance(value, Mapping):
        return f"{kind} of {_counted(len(value), 'key')}"
    return kind


def key_text(key: str) -> str:
    """A caller's key as one segment of a place: `escaped`, or "(a key of N characters)" past MAX_KEY_CHARS_SHOWN."""
    return escaped(key) if len(key) <= MAX_KEY_CHARS_SHOWN else f"(a key of {len(key)} characters)"


def key_named(key: str) -> str:
    """A caller's key as a fault names it on its own: `key_text` in backticks (a long key's description bare)."""
    return f"`{key_text(key)}`" if len(key) <= MAX_KEY_CHARS_SHOWN else key_text(key)


def keys_named(keys: Iterable[str]) -> str:
    """Up to MAX_KEYS_NAMED keys, each `key_named`, the rest counted ("`a`, `b` and 3 more")."""
    listed = list(keys)
    shown = ", ".join(key_named(key) for key in listed[:MAX_KEYS_NAMED])
    rest = len(listed) - MAX_KEYS_NAMED
    return f"{shown} and {rest} more" if rest > 0 else shown


def place_of(path: Iterable[str | int], whole: str) -> str:
    """A path of keys and indexes as a fault names it (`metadata.sourceAnchors[0].path`, in backticks), or `whole`
    (the checked value in words) for the empty path."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{key_text(str(part))}" if text else key_text(str(part))
    return f"`{text}`" if text else whole


def place(error: ValidationError, whole: str) -> str:
    """The place of the value `error` is about (`place_of` its path)."""
    return place_of(error.absolute_path, whole)


def describe(error: ValidationError, whole: str, *, sent: bool) -> str:
    """One line naming the place and the constraint `error` reports, no final full stop. `sent`: add the value's
    `json_kind` ("; a string of 3 characters was sent") where the constraint is about its type or size (a caller
    sent it; a stored record was not sent, and its checker says so in its own words)."""
    keyword, bound, instance = error.validator, error.validator_value, error.instance
    where = place(error, whole)
    if keyword is None:  # the schema `false`; jsonschema reports the enclosing value's path
        return f"a value in {where} is not allowed by the schema"
    if keyword == "required":
        missing = [key for key in bound if isinstance(instance, Mapping) and key not in instance]
        return f"{_keys_are(missing, 'missing', kind='required ')} from {where}"
    if keyword == "additionalProperties":
        return f"{_keys_are(_extra_keys(error), 'not allowed')} in {where}"
    if keyword == "unevaluatedProperties":
        return f"a key the schema does not declare is not allowed in {where}"
    if keyword == "uniqueItems":
        return f"{where} holds the same item twice"
    shown = sent and keyword not in _RANGES  # a number's kind says nothing its range does not
    return where + _constraint(str(keyword), bound) + (f"; {json_kind(instance)} was sent" if shown else "")


def fault(check: Check, validator: Callable[[], Validator], instance: Any, whole: str, *, sent: bool,
          stricter_decides: bool = True) -> str | None:
    """None when `instance` passes `check` (a `fast_check`); else why it fails, as `describe` words `jsonschema`'s
    best match (`validator()` builds or fetches the compiled validator; called only here). Where `jsonschema` finds
    nothing, the two readings of a pattern disagree: ECMA_DOLLAR_FAULT when `stricter_decides`, else None (the
    instance is valid as `jsonschema` reads it)."""
    if check(instance):
        return None
    from jsonschema.exceptions import best_match  # only to name a fault: see the module docstring

    try:
        error = best_match(validator().iter_errors(instance))
    except RecursionError:
        # orjson parses up to 1,024 levels; naming the failing place in a value that deep outruns Python's stack.
        return f"{whole} is nested too deeply to name where it fails"
    if error is None:
        return ECMA_DOLLAR_FAULT if stricter_decides else None
    return describe(error, whole, sent=sent)


def fast_check(schema: Mapping[str, Any]) -> Check:
    """jsonschema-rs's verdict on documents of `schema` (its `$schema` picks the draft; 2020-12 without one, where
    `format` is an annotation, as `jsonschema` treats a format it has no checker for). A value it cannot read as
    JSON (an integer past 64 bits, a YAML timestamp) is a False: `jsonschema` then names the fault."""
    is_valid = jsonschema_rs.validator_for(dict(schema)).is_valid

    def check(instance: Any) -> bool:
        try:
            return bool(is_valid(instance))
        except (ValueError, TypeError, OverflowError):
            return False

    return check


def _constraint(keyword: str, bound: Any) -> str:
    """What the schema asks, worded after the place (" must be of type string")."""
    if keyword == "type":
        return f" must be of type {' or '.join(bound) if isinstance(bound, list) else bound}"
    if keyword in _BOUNDS:
        return f" violates {keyword} {bound}"
    if keyword == "enum":
        return f" must be one of: {', '.join(_schema_value(value) for value in bound)}"
    if keyword == "const":
        return f" must be {_schema_value(bound)}"
    if keyword == "pattern":
        return f" does not match the pattern `{bound}`"
    if keyword == "format":
        return f" is not a valid {bound}"
    return f" does not satisfy `{keyword}`"


def _schema_value(value: Any) -> str:
    """A value the schema states (an enum member, a const), as JSON writes it, a bare string as it is."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _extra_keys(error: ValidationError) -> list[str]:
    """The keys `additionalProperties: false` refuses (neither declared nor matching a declared pattern), sorted as
    the input tier sorts the unknown keys it names."""
    schema, instance = error.schema, error.instance
    if not isinstance(schema, Mapping) or not isinstance(instance, Mapping):
        return []
    declared, patterns = schema.get("properties", {}), list(schema.get("patternProperties", {}))
    return sorted(str(key) for key in instance
                  if key not in declared and not any(re.search(pattern, str(key)) for pattern in patterns))


def _keys_are(keys: list[str], state: str, *, kind: str = "") -> str:
    """"the key `a` is missing", "the keys `a`, `b` are missing", or "a key is missing" when none is known."""
    if not keys:
        return f"a {kind}key is {state}"
    if len(keys) == 1:
        return f"the {kind}key {keys_named(keys)} is {state}"
    return f"the {kind}keys {keys_named(keys)} are {state}"


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
