"""Rendering a record's rows: the word set and the embedded text made from the texts joined once are exactly what
each text gives on its own, whatever whitespace, case or characters the texts hold; and each line is the JSON of
its row, however it is spelled."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence.lake_runs import LastSeen
from projection.review_layout import CHANNEL_BODY, CHANNEL_COMMENT, CHANNEL_REVIEW_BODY, CHANNEL_TITLE
from projection.review_rows import Projected, assemble, from_columns, project, to_columns
from tests.projection.review_records import thread
from theurian.text import ascii_fold

# Every whitespace character str.split knows (line breaks, \x1c-\x1f, U+0085, U+2028, ideographic space), NUL,
# letters on either side of A-Z and past ASCII, and empty texts (no lone surrogate: a record never holds one).
_PIECES = st.sampled_from([" ", "\n", "\t", "\x1c", "\x1f", "\x85", "\xa0", "\u2028", "\u3000", "\x00", "A", "z",
                           "Q", "\u00c9", "\u212a", "\u0130", "\U0001f600", "ab", "AB"])
_TEXTS = st.lists(st.lists(_PIECES, max_size=12).map("".join), max_size=5)
_FIELDS = ("sha256-x/review-thread/PRRT_x.0.json", "PRRT_x", "review-thread", "github", "Acme/Alpha", 7, "open",
           "src/a.py", "https://github.com/Acme/Alpha/pull/7", "U_a", "a", "sha256:" + "0" * 64)


@settings(max_examples=300, deadline=None)
@given(bodies=_TEXTS)
def test_a_records_words_are_the_union_of_each_of_its_texts_folded_words(bodies: list[str]) -> None:
    rendered = assemble(_FIELDS, [(CHANNEL_COMMENT, body) for body in bodies], None)
    each = {word for body in bodies for word in ascii_fold(body).split()}
    # Consumers read the words by NUL-separated parts (a word holding a NUL comes apart at it): compare those.
    assert sorted(rendered.words.split("\x00")) == sorted("\x00".join(each).split("\x00"))
    assert rendered.embedding_text == ("\n".join(body for body in bodies if body) or None)


def test_a_projected_thread_carries_its_facts_and_its_joined_comments() -> None:
    record = thread("Acme/Alpha", 7, "PRRT_x", bodies=("First LINE", "", "second"))
    projected = project("sha256-x/review-thread/PRRT_x.0.json", record, LastSeen("01RUN", "2026-01-01T00:00:00Z"),
                        "sha256:" + "0" * 64)
    assert projected.embedding_text == "First LINE\nsecond"
    assert sorted(projected.words.split("\x00")) == ["first", "line", "second"]
    assert projected.facts is not None and projected.facts.created_at == record["comments"][0]["createdAt"]


# Any text a record can hold: every code point but a lone surrogate, the characters JSON escapes included.
_ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


def _row_tail(row: dict[str, object]) -> bytes:
    return orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE)[1:]


@pytest.mark.parametrize("channel", [CHANNEL_TITLE, CHANNEL_BODY, CHANNEL_REVIEW_BODY, CHANNEL_COMMENT,
                                     "a channel \"spelled\" nowhere"])
@settings(max_examples=100, deadline=None)
@given(bodies=st.lists(_ANY_TEXT, max_size=4))
def test_a_text_lines_tail_is_the_json_of_its_position_channel_and_body(channel: str, bodies: list[str]) -> None:
    rendered = assemble(_FIELDS, [(channel, body) for body in bodies], None)
    assert rendered.text_tails == [_row_tail({"position": position, "channel": channel, "body": body})
                                   for position, body in enumerate(bodies)]
    lead = orjson.loads(b"{" + rendered.record_tail)["lead_position"]
    assert lead == next((position for position, body in enumerate(bodies) if body), None)


def test_rows_sent_as_columns_come_back_equal_in_order_and_of_their_type() -> None:
    rows = [project(f"sha256-x/review-thread/PRRT_{index}.0.json",
                    thread("Acme/Alpha", index, f"PRRT_{index}", bodies=(f"comment {index}",)), None,
                    "sha256:" + "0" * 64) for index in range(3)]
    for sent in (rows, rows[:1], []):
        back = from_columns(to_columns(sent))
        assert back == sent and all(type(row) is Projected for row in back)
