"""The word-pair index: DuckDB splits texts exactly where `str.split` does, the pairs a `q` requires are known from
`q` alone only where its pieces fix the cut, and common words that never touch leave no candidate block. Built on
a thread beside the concern stage, it is still digested before the concerns, and a failure on either side stops
the build with the old store untouched and no thread left behind."""

from __future__ import annotations

import functools
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import projection.review_build as review_build
import projection.review_pairs as review_pairs
from projection.review_build import build_review_store
from projection.review_concerns import ConcernsFound, build_concerns
from projection.review_digest import LineDigest, digest_tables
from projection.review_layout import BLOCK_RECORDS, DIGEST_TABLES
from projection.review_pairs import OTHER_WHITESPACE, PAIR_CHARS, build_pairs, pair_keys, split_sql, words_sql_params
from projection.review_query import RecordFilter, _candidate_blocks
from projection.review_store import open_store, store_path
from tests.projection.interrupted_build import assert_old_store_serves, built_with_one_record
from tests.projection.review_records import new_project, pull_request, review, write_lake
from tests.support.concern_set import lake_records
from theurian.interrupts import Interrupts
from theurian.text import ascii_fold

WHITESPACE = OTHER_WHITESPACE + " "


def _sql_words(connection: duckdb.DuckDBPyConnection, text: str) -> list[str]:
    sql = f"SELECT {split_sql()} FROM (SELECT ?::VARCHAR AS body)"
    return list(connection.execute(sql, [*words_sql_params(), text]).fetchall()[0][0])


def test_the_other_whitespace_is_every_character_str_split_splits_at_but_the_space() -> None:
    assert OTHER_WHITESPACE == "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace() and c != " ")


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


def test_the_stamp_digests_the_pairs_before_the_concerns_as_a_reader_reads_them_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, lake_records())  # the labelled concern set: both the pairs and the concerns have rows
    concerns_done = threading.Event()
    real_pairs = review_pairs.insert_pairs

    def pairs_finishing_last(*arguments: Any) -> None:
        assert concerns_done.wait(timeout=60)  # the concern stage has digested everything before the pairs start
        real_pairs(*arguments)

    def concerns(*arguments: Any) -> ConcernsFound:
        found = build_concerns(*arguments)
        concerns_done.set()
        return found

    monkeypatch.setattr(review_pairs, "insert_pairs", pairs_finishing_last)
    monkeypatch.setattr(review_build, "build_concerns", concerns)
    summary = build_review_store(root)
    assert summary.concerns > 0
    with duckdb.connect(":memory:") as connection:
        connection.execute(f"ATTACH '{store_path(root)}' AS s (READ_ONLY)")
        assert connection.execute("SELECT count(*) FROM s.word_pairs").fetchone() != (0,)
        stamped = connection.execute("SELECT row_digest FROM s.build_stamp").fetchone()
        assert stamped == (digest_tables(connection, DIGEST_TABLES, "s."),)


def _built_once(tmp_path: Path) -> Path:
    root = built_with_one_record(tmp_path)
    write_lake(root, [pull_request("Acme/Alpha", 2, "PR_new", body="a new one")])
    return root


def test_a_concern_stage_that_fails_while_the_pairs_build_stops_them_and_leaves_the_old_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _built_once(tmp_path)
    started = threading.Event()
    ended: list[BaseException | None] = []

    def endless_pairs(cursor: duckdb.DuckDBPyConnection) -> None:
        # A pair build that would take minutes (10^11 rows summed): only the build's interrupt ends it soon.
        started.set()
        try:
            cursor.execute("SELECT sum(range) FROM range(100000000000)").fetchall()
        except BaseException as exc:
            ended.append(exc)
            raise
        ended.append(None)

    def interrupted_concerns(*arguments: Any) -> NoReturn:
        assert started.wait(timeout=30)  # the pairs are on their thread when the concern stage stops
        raise KeyboardInterrupt

    monkeypatch.setattr(review_pairs, "insert_pairs", endless_pairs)
    monkeypatch.setattr(review_build, "build_concerns", interrupted_concerns)
    with pytest.raises(KeyboardInterrupt):
        build_review_store(root)
    assert len(ended) == 1 and isinstance(ended[0], duckdb.InterruptException)  # stopped, not waited out
    assert_old_store_serves(root, "review-pairs")


def test_a_pair_build_that_fails_stops_the_build_and_leaves_the_old_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _built_once(tmp_path)

    def failing_pairs(*arguments: Any) -> None:
        raise duckdb.IOException("the disk filled up")

    monkeypatch.setattr(review_pairs, "insert_pairs", failing_pairs)
    with pytest.raises(duckdb.IOException, match="disk filled"):
        build_review_store(root)
    assert_old_store_serves(root, "review-pairs")


def _interrupting_after_submit(frame: FrameType, event: str, argument: object) -> Any:
    """A trace that raises KeyboardInterrupt as `ThreadPoolExecutor.submit` returns to `pairs_building`: a Ctrl-C
    landing after the pairs thread has started and before the block's `try` is entered, deterministically."""
    if frame.f_code is not ThreadPoolExecutor.submit.__code__ or frame.f_back is None:
        return None
    if frame.f_back.f_code is not review_pairs.pairs_building.__wrapped__.__code__:  # type: ignore[attr-defined]
        return None

    def on_return(frame: FrameType, event: str, argument: object) -> Any:
        if event == "return":
            raise KeyboardInterrupt
        return on_return
    return on_return


def test_a_ctrl_c_just_after_the_pairs_thread_starts_leaves_no_thread_waiting(tmp_path: Path) -> None:
    # Seen once as a build stopped by SIGTERM that never exited: the thread waited for texts nobody would load.
    connection = duckdb.connect(str(tmp_path / "store.duckdb"))
    texts_loaded: Future[None] = Future()
    digest_free: Future[None] = Future()
    raised: list[BaseException] = []

    def enter() -> None:
        sys.settrace(_interrupting_after_submit)
        try:
            with review_pairs.pairs_building(connection, LineDigest(), Interrupts(), texts_loaded, digest_free):
                pass
        except BaseException as exc:
            raised.append(exc)
        finally:
            sys.settrace(None)

    entering = threading.Thread(target=enter, daemon=True)
    entering.start()
    entering.join(timeout=30)
    try:
        assert not entering.is_alive(), "the block waited on a pairs thread that waits for the texts"
        assert len(raised) == 1 and isinstance(raised[0], KeyboardInterrupt)
        assert not [thread for thread in threading.enumerate() if thread.name.startswith("review-pairs")]
    finally:
        texts_loaded.cancel()  # lets a stuck thread go, so a failure here does not hang the run's exit
        entering.join(timeout=30)
        connection.close()


def _python_pairs(texts: list[str]) -> list[tuple[int, str]]:
    """What `word_pairs` holds for `texts` at ordinals 0, 1, ...: per block, each folded word's end beside the next
    word's start, distinct and sorted, NUL-delimited (the module's definition, in Python)."""
    blocks: dict[int, set[str]] = {}
    for ordinal, text in enumerate(texts):
        words = ascii_fold(text).split()
        found = blocks.setdefault(ordinal // BLOCK_RECORDS, set())
        found.update(f"{a[-PAIR_CHARS:]} {b[:PAIR_CHARS]}" for a, b in zip(words, words[1:], strict=False))
    return [(block, "\x00" + "\x00".join(sorted(pairs)) + "\x00") for block, pairs in sorted(blocks.items()) if pairs]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(WHITESPACE + "abcXYZ\x00É\u212aİ日-", max_size=30), min_size=1, max_size=2 * BLOCK_RECORDS + 3))
def test_the_sql_pairs_are_each_folded_words_end_beside_the_next_words_start(texts: list[str]) -> None:
    connection = _connection()
    connection.execute("CREATE OR REPLACE TEMP TABLE texts (ordinal BIGINT, body VARCHAR)")
    connection.execute(f"CREATE OR REPLACE TEMP TABLE {review_pairs.PAIR_TABLE} (block BIGINT, pairs VARCHAR)")
    connection.executemany("INSERT INTO texts VALUES (?, ?)", list(enumerate(texts)))
    build_pairs(connection, LineDigest())
    stored = connection.execute(f"SELECT block, pairs FROM {review_pairs.PAIR_TABLE} ORDER BY block").fetchall()
    assert stored == _python_pairs(texts)
