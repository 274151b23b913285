"""theurian.hidden_characters: every class named, in order, from every text value of a row; nothing altered."""

from __future__ import annotations

import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from theurian.hidden_characters import (
    BIDI_CONTROL,
    CLASSES,
    FIELD,
    OTHER_FORMAT,
    TAG_CHARACTER,
    ZERO_WIDTH,
    _any_hidden,
    classes_in,
    hidden_points,
    labelled,
    pattern_for,
)
from theurian.hidden_ranges import HIDDEN_RANGES

REPO = Path(__file__).resolve().parents[2]
EVERY_CODE_POINT = "".join(map(chr, range(sys.maxunicode + 1)))

SAMPLES = {
    BIDI_CONTROL: ["\u202e", "\u2066", "\u200f", "\u061c"],
    ZERO_WIDTH: ["\u200b", "\u200d", "\u2060", "\ufeff"],
    TAG_CHARACTER: ["\U000e0001", "\U000e0041", "\U000e007f"],
    OTHER_FORMAT: ["\u00ad", "\u2062", "\ufff9"],
}


@pytest.mark.parametrize(("name", "char"), [(n, c) for n, chars in SAMPLES.items() for c in chars])
def test_each_hidden_character_is_named_by_its_class(name: str, char: str) -> None:
    assert classes_in([f"fine{char}text"]) == [name]


def test_plain_text_including_emoji_and_other_scripts_has_no_hidden_characters() -> None:
    assert classes_in(["Retry writes 修正 🎉", "锁在读取之前获取", "tab\tand newline\n", "\x07 bell"]) == []


def test_classes_are_listed_once_each_in_a_fixed_order() -> None:
    text = "".join(chars[0] for chars in reversed(SAMPLES.values())) * 3
    assert classes_in([text]) == list(CLASSES)


def test_a_row_is_labelled_from_every_text_value_nested_ones_included_and_its_values_are_kept() -> None:
    row = {"title": "plain", "excerpt": "a\u200bb", "anchors": [{"uri": "x\u202ey"}], "count": 3, "flag": True}
    before = {k: v for k, v in row.items()}
    assert labelled(row)[FIELD] == [BIDI_CONTROL, ZERO_WIDTH]
    assert {k: v for k, v in row.items() if k != FIELD} == before


def test_a_row_without_hidden_characters_is_labelled_with_an_empty_list() -> None:
    assert labelled({"a": "plain"})[FIELD] == []


def test_a_stale_label_is_recomputed_never_trusted() -> None:
    assert labelled({"a": "plain", FIELD: [BIDI_CONTROL]})[FIELD] == []


def test_the_pattern_matches_exactly_the_definition_s_code_points_among_every_code_point() -> None:
    assert frozenset(_any_hidden().findall(EVERY_CODE_POINT)) == hidden_points()


def test_a_unicode_version_the_table_lacks_is_matched_from_the_definition() -> None:
    assert frozenset(pattern_for("0.0.0").findall(EVERY_CODE_POINT)) == hidden_points()


def test_the_table_holds_this_python_s_unicode_version_so_no_process_walks_every_code_point() -> None:
    assert unicodedata.unidata_version in HIDDEN_RANGES, "run scripts/hidden_ranges.py under this Python"


def test_the_checked_in_table_is_what_the_definition_writes_under_this_python() -> None:
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "hidden_ranges.py"), "--check"],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
