"""What a migration's schema check refuses, worded for whoever sent it: the place, the constraint, and the value
described by its JSON type and size, never quoted.

`jsonschema`'s own message reprints the value (a Python repr, cut short with no marker): a caller's text, keys or
a megabyte of it would come back in the refusal an agent reads (docs/operating.md: no refusal repeats a value the
caller sent). Everything shown here comes from the schema (its bounds, vocabularies, key names) or from counting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from jsonschema.exceptions import ValidationError

_MAX_KEY_CHARS_SHOWN: Final = 80
_JSON_TYPES: Final = ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
                      (list, "an array"), (Mapping, "an object"))


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


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def place(error: ValidationError, whole: str) -> str:
    """The failing value's path (`metadata.sourceAnchors[0].path`), in backticks, or `whole` for the checked value
    itself; a key past 80 characters is described by its length, and every key is shown escaped."""
    parts = []
    for part in error.absolute_path:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            text = str(part)
            shown = text if len(text) <= _MAX_KEY_CHARS_SHOWN else f"(a key of {len(text)} characters)"
            parts.append("." + shown.encode("unicode_escape").decode("ascii"))
    return f"`{''.join(parts).removeprefix('.')}`" if parts else whole


def described(error: ValidationError, whole: str) -> str:
    """One sentence naming the place (`whole` when it is the checked value itself) and the constraint, the value
    given only as `json_kind` says it."""
    keyword, bound = error.validator, error.validator_value
    where, sent = place(error, whole), json_kind(error.instance)
    if keyword == "type":
        expected = " or ".join(bound) if isinstance(bound, list) else bound
        return f"{where} must be of type {expected}; {sent} was sent"
    if keyword == "required":
        missing = [key for key in bound if isinstance(error.instance, Mapping) and key not in error.instance]
        return f"{where} lacks the required key {', '.join(f'`{key}`' for key in missing)}"
    if keyword in ("maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties"):
        return f"{where} violates {keyword} {bound}; {sent} was sent"
    if keyword in ("maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum"):
        return f"{where} violates {keyword} {bound}"
    if keyword == "enum":
        return f"{where} must be one of {', '.join(map(str, bound))}; {sent} was sent"
    if keyword == "const":
        return f"{where} must be {bound!r}; {sent} was sent"
    if keyword == "pattern":
        return f"{where} does not match the pattern {bound}; {sent} was sent"
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        return f"{where} holds a key the schema does not allow"
    if keyword == "uniqueItems":
        return f"{where} holds the same item twice"
    return f"{where} fails `{keyword}`; {sent} was sent"
