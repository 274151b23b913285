"""The one ASCII fold, the one surrogate check every stage imports, and the one-line escape of what a terminal would
act on."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from theurian.hidden_characters import BIDI_CONTROLS
from theurian.text import ASCII_LOWER, ASCII_UPPER, ascii_fold, is_utf8, one_line


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
