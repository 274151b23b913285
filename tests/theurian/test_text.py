"""The one ASCII fold, the one surrogate check every stage imports, the one-line escape of what a terminal would
act on, and the one way a refusal quotes a caller's text."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from theurian.hidden_characters import BIDI_CONTROLS, classes_in
from theurian.text import (
    ASCII_LOWER,
    ASCII_UPPER,
    MAX_SHOWN_CHARS,
    ascii_fold,
    escaped,
    is_utf8,
    one_line,
    quoted,
    shell_word,
)


def test_ascii_folding_touches_only_a_to_z() -> None:
    assert ascii_fold("ÀBC-xyz-İ-Ω") == "Àbc-xyz-İ-Ω"
    assert ascii_fold("\u212aELVIN") == "\u212aelvin"  # KELVIN SIGN stays: str.lower would make it 'k'


def test_the_sql_alphabets_are_the_26_ascii_letters_in_the_same_order() -> None:
    assert ascii_fold(ASCII_UPPER) == ASCII_LOWER and len(ASCII_UPPER) == 26


@given(st.text())
def test_the_fold_keeps_a_strings_length_and_agrees_with_lower_case_on_ascii(text: str) -> None:
    folded = ascii_fold(text)
    assert len(folded) == len(text)
    assert all(a == b or (a in ASCII_UPPER and b == a.lower()) for a, b in zip(text, folded, strict=True))


def test_a_lone_surrogate_is_not_utf8_and_a_paired_one_is() -> None:
    assert not is_utf8("a\ud800b") and not is_utf8("\udfff")
    assert is_utf8("\U0001f600") and is_utf8("")


def test_the_fold_of_every_code_point_lone_surrogates_included_changes_a_to_z_and_nothing_else() -> None:
    everything = "".join(map(chr, range(0x110000)))  # past ASCII, so the fold takes its UTF-8 byte path
    assert ascii_fold(everything) == everything.translate(str.maketrans(ASCII_UPPER, ASCII_LOWER))


def test_one_line_escapes_terminal_escapes_line_breaks_and_bidi_controls_and_keeps_joiners_and_wide_spaces() -> None:
    assert one_line("a\x1b[2J\x1b]0;t\x07\rb\nc\u2028d\x85e") == "a\\x1b[2J\\x1b]0;t\\x07\\rb\\nc\\u2028d\\x85e"
    assert one_line("x\u202ey\u2066z") == "x\\u202ey\\u2066z"  # would reorder what the terminal shows
    assert all(one_line(c) != c for c in BIDI_CONTROLS)
    assert one_line("tab\there \u3000 \U0001f469\u200d\U0001f52c é") == "tab\there \u3000 \U0001f469\u200d\U0001f52c é"


def test_escaped_writes_what_a_reader_would_not_see_as_its_escape_and_keeps_every_printable_character() -> None:
    assert escaped("caf\u00e9 \u6771\u4eac \U0001f469") == "caf\u00e9 \u6771\u4eac \U0001f469"
    assert escaped("a\nb\x00c\x1bd\u202ee\u200bf\u3000g\th\\n") == "a\\nb\\x00c\\x1bd\\u202ee\\u200bf\\u3000g\\th\\\\n"
    assert all(escaped(c) != c for c in BIDI_CONTROLS)


def test_what_escaped_keeps_as_typed_holds_no_hidden_character_of_any_class() -> None:
    """escaped keeps a character exactly when it is printable (and no backslash): the test below pins it against
    `repr` over every code point. No printable character is one hidden_characters names, bidi controls included."""
    printable = "".join(filter(str.isprintable, map(chr, range(sys.maxunicode + 1))))
    assert classes_in([printable]) == [] and escaped(printable.replace("\\", "")) == printable.replace("\\", "")


def test_quoted_escapes_exactly_what_escaped_does_inside_its_quotes() -> None:
    every = "".join(chr(point) for point in range(sys.maxunicode + 1) if chr(point) not in "'\"")
    assert quoted(every, len(every)) == f"'{escaped(every)}'"


def test_quoted_quotes_a_value_at_its_bound_and_gives_one_past_it_by_length_alone() -> None:
    assert quoted("v" * MAX_SHOWN_CHARS) == "'" + "v" * MAX_SHOWN_CHARS + "'"
    assert quoted("v" * (MAX_SHOWN_CHARS + 1)) == f"a value of {MAX_SHOWN_CHARS + 1} characters"
    assert quoted("x" * 201, 200, described_as="an id") == "an id of 201 characters"
    assert quoted("x" * 200, 200) == repr("x" * 200)



@pytest.mark.parametrize(("text", "word"), [
    ("/tmp/plain-dir_1.x", "/tmp/plain-dir_1.x"), ("/tmp/my dir", "'/tmp/my dir'"), ("it's", "'it'\"'\"'s'"),
    ("/tmp/x/\udcffdir", r"$'/tmp/x/\xffdir'"), ("caf\u00e9\udcff", "$'caf\u00e9\\xff'"),
    ("a\\b'\udcff", r"$'a\\b\'\xff'"), ("tab\there", r"$'tab\x09here'"),
    ("zw\u200bj", r"$'zw\xe2\x80\x8bj'"), ("", "''"),
], ids=["plain", "a space", "a quote", "a byte not UTF-8", "printable and not", "backslash and quote",
        "a control", "a zero-width space", "empty"])
def test_a_shell_word_is_read_back_by_bash_as_exactly_the_texts_bytes(text: str, word: str) -> None:
    assert shell_word(text) == word
    printed = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, check=True, timeout=30)
    assert printed.stdout == text.encode("utf-8", "surrogateescape")
