"""theurian.hidden_characters: every class named, in order, from every text value of a row; nothing altered."""

from __future__ import annotations

import pytest

from theurian.hidden_characters import (
    BIDI_CONTROL,
    CLASSES,
    FIELD,
    OTHER_FORMAT,
    TAG_CHARACTER,
    ZERO_WIDTH,
    classes_in,
    labelled,
)

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
