"""The one-pass reader of migration YAML builds exactly what PyYAML's safe loader builds, leaves to that loader
what it does not handle, and refuses what `read_yaml` refuses; the compiled schema check decides validity."""

from __future__ import annotations

import copy
import datetime

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.errors import MigrationInvalidError
from knowledge.migration_yaml import UNCONSTRUCTIBLE_SCALAR, _DuplicateKey, _StrictLoader, read_yaml
from knowledge.migrations import validate_document
from theurian.text import MAX_SHOWN_CHARS

DOCUMENTS = [
    "a: 1\nb: [1, 2.5, yes, No, ~, null, '', 2026-01-01, 2026-08-01T09:00:00+09:00, '3', \"x\", 0x1f, 1_000, .inf]\n",
    "", "---\n", "# only a comment\n", "- a\n- {b: c, d: [e, {f: g}]}\n- - nested\n  - list\n",
    "text: |\n  kept\n  lines\nfolded: >-\n  one\n  two\nquoted: 'it''s'\nescaped: \"tab\\there\"\n",
    "k: !!str 12\nn: !!int '7'\n",  # explicit tags: PyYAML's own loader
    "<<: {a: 1}\nb: 2\n",  # a merge key: PyYAML's own loader (which refuses it)
    "? [a, b]\n: 1\n",  # a sequence as a key: PyYAML's own loader refuses it
    "a: 1\n---\nb: 2\n",  # two documents: refused as yaml.load refuses them
    "1: one\n2.5: two\nfalse: three\n~: four\n",  # keys of every scalar kind
    "1: one\ntrue: again\n",  # 1 == True: the same key twice, to Python and to both readers
    "é: 日本語 🎉\nempty_map: {}\nempty_list: []\n", "! 123\n", "key: ! yes\n",
    # Plain text whose first character no resolver pattern starts with (read as a string without asking the
    # resolver) beside text whose first character one does.
    "ids: [architecture.rule-1, sha256:ab, ../k/x.md, 01K3ABC, 1e3, Yes, on, OFF, y, n, .5, -1, +2, 0o17,"
    " ~x, Null, NULL, nULL, 2026-1-1, <<x, a~, _1, ' x']\n",
    "value: =\n",  # the `=` value tag, which the safe constructor refuses
]
SCALARS = st.one_of(st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False),
                    st.text(max_size=12), st.dates())
TREES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.text(max_size=6), st.integers()), inner, max_size=4)),
    max_leaves=20)


def _reference(text: str) -> object:
    """What `read_yaml` answered before the one-pass reader: PyYAML's loader with the duplicate-key check."""
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except (yaml.YAMLError, _DuplicateKey):
        return "refused"


def _read(text: str) -> object:
    try:
        return read_yaml("m.yaml", text.encode("utf-8"))
    except MigrationInvalidError:
        return "refused"


@pytest.mark.parametrize("text", DOCUMENTS)
def test_the_reader_builds_what_the_safe_loader_builds(text: str) -> None:
    assert _read(text) == _reference(text)
    assert type(_read(text)) is type(_reference(text))


@settings(max_examples=300, deadline=None)
@given(tree=TREES, style=st.sampled_from([None, True, False]))
def test_any_document_pyyaml_writes_reads_back_as_the_safe_loader_reads_it(tree: object, style: bool | None) -> None:
    text = yaml.safe_dump(tree, default_flow_style=style, allow_unicode=True)
    assert _read(text) == _reference(text)


def test_a_timestamp_where_a_string_belongs_is_invalid_and_named() -> None:
    """An unquoted createdAt is a YAML timestamp, a datetime: the compiled check cannot read it as JSON, and
    jsonschema names it."""
    document = read_yaml("m.yaml", b"createdAt: 2026-08-01T09:00:00Z\n")
    assert isinstance(document, dict) and isinstance(document["createdAt"], datetime.datetime)
    valid = {"apiVersion": "theurian.dev/v1", "id": "01K2AAAAAAAAAAAAAAAAAAAAAA", "author": "a",
             "createdAt": document["createdAt"], "dependsOn": [], "description": "d",
             "operations": [{"op": "deprecateItem", "itemId": "x.y", "reason": "r"}]}
    with pytest.raises(MigrationInvalidError, match="createdAt"):
        validate_document("m.yaml", valid)


def test_an_id_ending_in_a_newline_is_refused_though_pythons_re_would_pass_it() -> None:
    """`$` matches before a final newline in Python's `re`; JSON Schema reads patterns as ECMA-262, where it does
    not. The stricter reading decides, with a reason rather than silence."""
    document = {"apiVersion": "theurian.dev/v1", "id": "01K2AAAAAAAAAAAAAAAAAAAAAA", "author": "a",
                "createdAt": "2026-08-01T09:00:00Z", "dependsOn": [], "description": "d",
                "operations": [{"op": "deprecateItem", "itemId": "x.y", "reason": "r"}]}
    validate_document("m.yaml", document)
    broken = copy.deepcopy(document)
    broken["id"] += "\n"
    with pytest.raises(MigrationInvalidError, match="ECMA-262"):
        validate_document("m.yaml", broken)


@pytest.mark.parametrize(("text", "shown"), [
    ("a: 1\na: 2\n", "the key 'a'"),
    ("3: 1\n3: 2\n", "the key 3"),  # a number as YAML wrote it, never quoted as if it were a string
    ('"a\\nb\\u202e": 1\n"a\\nb\\u202e": 2\n', "the key 'a\\nb\\u202e'"),
    (f"{'k' * MAX_SHOWN_CHARS}: 1\n{'k' * MAX_SHOWN_CHARS}: 2\n", f"the key '{'k' * MAX_SHOWN_CHARS}'"),
    (f"{'k' * (MAX_SHOWN_CHARS + 1)}: 1\n{'k' * (MAX_SHOWN_CHARS + 1)}: 2\n",
     f"a key of {MAX_SHOWN_CHARS + 1} characters"),
])
def test_a_repeated_key_is_quoted_as_every_refusal_quotes_a_callers_text(text: str, shown: str) -> None:
    with pytest.raises(MigrationInvalidError) as refused:
        read_yaml("m.yaml", text.encode("utf-8"))
    assert refused.value.problem == (f"line 2: {shown} appears twice in one mapping (YAML would silently keep the "
                                     "last value); write it once")


@pytest.mark.parametrize("text", ["createdAt: 2026-02-30T10:00:00Z\n", "when: 2026-13-01\n",
                                  f"n: {'1' * 5000}\n", f"? {'1' * 5000}\n: 1\n", "- [2026-02-30]\n"])
def test_a_scalar_yaml_cannot_construct_is_refused_in_words_never_raised_as_a_value_error(text: str) -> None:
    """PyYAML's constructors call datetime() and int() unguarded: each of these raised ValueError out of read_yaml,
    a traceback for `migrate apply` and an internal fault for a draft."""
    with pytest.raises(MigrationInvalidError) as refused:
        read_yaml("m.yaml", text.encode("utf-8"))
    assert refused.value.problem == UNCONSTRUCTIBLE_SCALAR
