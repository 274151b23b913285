"""The one wording of a schema fault: the place for every keyword, the constraint, the value only as its JSON type
and size, caller keys escaped and capped, one line; and the fast-check-then-explain path."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from theurian.schema_faults import (
    ECMA_DOLLAR_FAULT,
    MAX_KEY_CHARS_SHOWN,
    MAX_KEYS_NAMED,
    describe,
    fast_check,
    fault,
    json_kind,
    place_of,
)
from theurian.text import MAX_SHOWN_CHARS

SECRET = "SECRET-VALUE"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "caf\u00e9": {"type": "object", "required": ["x"], "properties": {"x": {}}},
        "s": {"type": "string", "minLength": 2, "maxLength": 3},
        "e": {"enum": ["a", "b", None]},
        "c": {"const": False},
        "p": {"type": "string", "pattern": "^a+$"},
        "u": {"type": "array", "uniqueItems": True, "maxItems": 2},
        "n": {"type": "integer", "exclusiveMinimum": 0, "maximum": 10},
        "o": {"type": "object", "properties": {"a": {}}, "patternProperties": {"^x-": {}},
              "additionalProperties": False, "minProperties": 1},
        "t": {"type": ["string", "null"]},
        "f": {"type": "string", "format": "email"},
        "a": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "q": {"type": "object", "unevaluatedProperties": False, "properties": {"a": {}}},
    },
}
_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker())


def _described(instance: Any, *, sent: bool = True) -> str:
    error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(instance))
    assert error is not None
    return describe(error, "the document", sent=sent)


@pytest.mark.parametrize(("instance", "worded"), [
    ({"caf\u00e9": {}}, "the required key `x` is missing from `caf\u00e9`"),
    ({"s": SECRET}, "`s` violates maxLength 3; a string of 12 characters was sent"),
    ({"s": "a"}, "`s` violates minLength 2; a string of 1 character was sent"),
    ({"e": SECRET}, "`e` must be one of: a, b, null; a string of 12 characters was sent"),
    ({"c": True}, "`c` must be false; a boolean was sent"),
    ({"p": SECRET}, "`p` does not match the pattern `^a+$`; a string of 12 characters was sent"),
    ({"u": [SECRET, SECRET]}, "`u` holds the same item twice"),
    ({"u": [1, 2, 3]}, "`u` violates maxItems 2; an array of 3 items was sent"),
    ({"n": 0}, "`n` violates exclusiveMinimum 0"),
    ({"n": 11}, "`n` violates maximum 10"),
    ({"n": SECRET}, "`n` must be of type integer; a string of 12 characters was sent"),
    ({"o": {"a": 1, "x-ok": 1, "zz": SECRET}}, "the key `zz` is not allowed in `o`"),
    ({"o": {}}, "`o` violates minProperties 1; an object of 0 keys was sent"),
    ({"t": 7}, "`t` must be of type string or null; an integer was sent"),
    ({"f": SECRET}, "`f` is not a valid email; a string of 12 characters was sent"),
    ({"a": [SECRET]}, "`a` does not satisfy `anyOf`; an array of 1 item was sent"),
    ({"q": {"a": 1, "zz": SECRET}}, "a key the schema does not declare is not allowed in `q`"),
    ([SECRET], "the document must be of type object; an array of 1 item was sent"),
])
def test_each_keyword_is_worded_at_its_place_without_the_value(instance: Any, worded: str) -> None:
    assert _described(instance) == worded
    assert SECRET not in worded


def test_without_sent_no_value_is_described_at_all() -> None:
    assert _described({"s": SECRET}, sent=False) == "`s` violates maxLength 3"
    assert _described({"e": SECRET}, sent=False) == "`e` must be one of: a, b, null"


def test_required_keys_are_named_at_the_top_level_as_the_whole_value() -> None:
    validator = jsonschema.Draft202012Validator({"required": ["projectId", "b"]})
    error = jsonschema.exceptions.best_match(validator.iter_errors({}))
    assert error is not None
    assert describe(error, "the arguments", sent=True) == (
        "the required keys `projectId`, `b` are missing from the arguments")


def test_a_false_schema_is_refused_in_words_not_as_a_python_none() -> None:
    validator = jsonschema.Draft202012Validator({"properties": {"f": False}})
    error = jsonschema.exceptions.best_match(validator.iter_errors({"f": SECRET}))
    assert error is not None
    assert describe(error, "the document", sent=True) == "a value in the document is not allowed by the schema"


@pytest.mark.parametrize(("key", "shown"), [
    ("caf\u00e9", "caf\u00e9"), ("\u6771\u4eac", "\u6771\u4eac"), ("a\nb", "a\\nb"), ("a\x00b", "a\\x00b"),
    ("a\x1b[31mb", "a\\x1b[31mb"), ("a\u202eb", "a\\u202eb"), ("a\u200bb", "a\\u200bb"), ("a\\nb", "a\\\\nb"),
    ("a\tb", "a\\tb"), ("a\u3000b", "a\\u3000b"),
])
def test_a_key_in_a_place_is_escaped_only_where_a_reader_would_not_see_it_as_written(key: str, shown: str) -> None:
    assert place_of([key, 0, "x"], "the document") == f"`{shown}[0].x`"
    assert place_of([key, 0, "x"], "the document").isprintable()


def test_a_key_is_shown_up_to_the_bound_and_described_by_its_length_one_past_it() -> None:
    assert MAX_KEY_CHARS_SHOWN == MAX_SHOWN_CHARS
    at, past = "k" * MAX_KEY_CHARS_SHOWN, "k" * (MAX_KEY_CHARS_SHOWN + 1)
    assert place_of([at], "w") == f"`{at}`"
    assert place_of(["a", past], "w") == f"`a.(a key of {MAX_KEY_CHARS_SHOWN + 1} characters)`"
    assert place_of([], "the whole") == "the whole"


def test_unknown_keys_are_named_up_to_the_bound_and_the_rest_counted() -> None:
    schema = {"type": "object", "additionalProperties": False}
    names = [f"k{index}" for index in range(MAX_KEYS_NAMED + 1)]
    exactly = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(
        dict.fromkeys(names[:MAX_KEYS_NAMED], 1)))
    one_more = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(
        dict.fromkeys(names, 1)))
    assert exactly is not None and one_more is not None
    assert describe(exactly, "w", sent=True) == "the keys `k0`, `k1`, `k2`, `k3`, `k4` are not allowed in w"
    assert describe(one_more, "w", sent=True) == "the keys `k0`, `k1`, `k2`, `k3`, `k4` and 1 more are not allowed in w"


def test_a_fault_is_one_line_whatever_the_keys_hold() -> None:
    worded = _described({"o": {"line\nbreak\u2028and\u202eoverride": SECRET}})
    assert "\n" not in worded and "\u2028" not in worded and "\u202e" not in worded and worded.isprintable()


@pytest.mark.parametrize(("value", "kind"), [
    (None, "null"), (True, "a boolean"), (7, "an integer"), (7.5, "a number"), ("", "a string of 0 characters"),
    ("x", "a string of 1 character"), ("SECRET", "a string of 6 characters"), ([1], "an array of 1 item"),
    ({"SECRET": 1, "b": 2}, "an object of 2 keys"), (object(), "a value JSON does not have"),
])
def test_a_value_is_named_by_its_json_type_and_size(value: object, kind: str) -> None:
    assert json_kind(value) == kind


PATTERNED = {"type": "object", "properties": {"k": {"type": "string", "pattern": "^a+$"}}}


def test_the_fast_check_decides_what_it_accepts_and_jsonschema_names_what_it_rejects() -> None:
    check = fast_check(PATTERNED)

    def validator() -> jsonschema.Draft202012Validator:
        return jsonschema.Draft202012Validator(PATTERNED)

    assert fault(check, validator, {"k": "aa"}, "the document", sent=True) is None
    assert fault(check, validator, {"k": "ab"}, "the document", sent=True) == (
        "`k` does not match the pattern `^a+$`; a string of 2 characters was sent")


def test_where_the_two_readings_of_a_pattern_disagree_the_caller_says_which_decides() -> None:
    """Python's `$` matches before a final newline; ECMA-262's, which jsonschema-rs reads, does not."""
    check = fast_check(PATTERNED)

    def validator() -> jsonschema.Draft202012Validator:
        return jsonschema.Draft202012Validator(PATTERNED)

    assert validator().is_valid({"k": "aa\n"}) and not check({"k": "aa\n"})
    assert fault(check, validator, {"k": "aa\n"}, "the document", sent=True) == ECMA_DOLLAR_FAULT
    assert fault(check, validator, {"k": "aa\n"}, "the document", sent=True, stricter_decides=False) is None
    assert "\n" not in ECMA_DOLLAR_FAULT and "trailing newline" in ECMA_DOLLAR_FAULT


def test_a_value_the_fast_check_cannot_read_as_json_is_a_verdict_and_jsonschema_names_it() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 5}}}
    check = fast_check(schema)
    assert check({"n": 2**70}) is False  # past 64 bits: a False, never an exception
    assert fault(check, lambda: jsonschema.Draft202012Validator(schema), {"n": 2**70}, "the record",
                 sent=False) == "`n` violates maximum 5"


def test_a_value_nested_past_pythons_stack_is_refused_in_words_not_with_a_recursion_error() -> None:
    schema = {"$defs": {"node": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "$ref": "#/$defs/node"}
    deep: list[Any] = []
    top = deep
    for _ in range(20_000):
        deep.append([])
        deep = deep[0]
    deep.append(SECRET)
    problem = fault(lambda _: False, lambda: jsonschema.Draft202012Validator(schema), top, "the record", sent=False)
    assert problem == "the record is nested too deeply to name where it fails"
