"""The word-pair index: DuckDB splits texts exactly where `str.split` does, the pairs a `q` requires are known from
`q` alone only where its pieces fix the cut, and common words that never touch leave no candidate block."""

from __future__ import annotations

import functools
from pathlib import Path

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from projection.review_build import build_review_store
from projection.review_pairs import OTHER_WHITESPACE, PAIR_CHARS, pair_keys, split_sql, words_sql_params
from projection.review_query import RecordFilter, _candidate_blocks
from projection.review_store import BLOCK_RECORDS, open_store
from tests.projection.review_records import new_project, review, write_lake
from theurian.text import ascii_fold

WHITESPACE = OTHER_WHITESPACE + " "


def _sql_words(connection: duckdb.DuckDBPyConnection, text: str) -> list[str]:
    sql = f"SELECT {split_sql()} FROM (SELECT ?::VARCHAR AS body)"
    return list(connection.execute(sql, [*words_sql_params(), text]).fetchall()[0][0])


def test_every_python_whitespace_character_splits_in_sql_and_nothing_else_does() -> None:
    connection = duckdb.connect()
    assert len(WHITESPACE) == 29  # str.isspace(): the 28 others and the space
    for character in WHITESPACE:
        assert _sql_words(connection, f"Ab{character}cD{character}{character}") == ["ab", "cd"]
    for character in "\x00\u200b\ufeff\u180e-_":  # not whitespace to str.split
        assert _sql_words(connection, f"a{character}b") == [f"a{character}b"]


@functools.cache
def _connection() -> duckdb.DuckDBPyConnection:
    """One in-memory database for every example: the split is a pure expression, so nothing carries over."""
    return duckdb.connect()


@settings(max_examples=300, deadline=None)
@given(st.text(WHITESPACE + "abcXYZ\x00É\u212aİ日-", max_size=40))
def test_the_sql_split_gives_the_words_of_the_python_fold_and_split(text: str) -> None:
    assert _sql_words(_connection(), text) == ascii_fold(text).split()


def test_a_neighbour_pair_is_required_only_where_the_pieces_fix_the_cut() -> None:
    assert pair_keys("lock cache") == [f"\x00lock {'cache'[:PAIR_CHARS]}\x00"]
    assert pair_keys("ab cd") == []  # "ab" may end a longer word, "cd" may start one
    assert pair_keys(" ab cd ") == ["\x00ab cd\x00"]  # whitespace around: whole words
    assert pair_keys("x lock cache y") == ["\x00lock cach\x00"]  # the middle pieces are whole words
    assert pair_keys("x ab y") == []  # neither edge piece fixes its word's cut
    assert pair_keys("slowlock cachemiss") == ["\x00lock cach\x00"]
    assert pair_keys("lock") == [] and pair_keys("lock\x00 cache") == []


def test_common_words_that_never_touch_leave_no_candidate_block(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, [review("o/r", 1 + index % 5, f"PRR_{index}", body="lock retry cache")
                      for index in range(3 * BLOCK_RECORDS)])
    build_review_store(root)
    with open_store(root).cursor() as cursor:
        def candidates(q: str, pull_request: int | None = None) -> list[int]:
            return _candidate_blocks(cursor, RecordFilter(pull_request=pull_request, q_folded=q))

        assert candidates("lock cache") == []
        assert candidates("lock retry") == [0, 1, 2]
        assert candidates("ck retry ca") == [0, 1, 2]  # short edges: the words decide
        assert candidates("retry lock") == []
        assert candidates("lock retry", pull_request=6) == []  # no record of the filter anywhere
