"""Loading a build's rows: the SQL fold is the Python fold exactly, a row's line is `row_line` of the row byte for
byte, and a load or a write that fails stops the build with the old store untouched and no thread left behind."""

from __future__ import annotations

import signal
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evidence.fast_check as fast_check
import evidence.validation as validation
import projection.review_build as review_build
import projection.review_load as review_load
from evidence.lake_runs import LastSeen
from projection.review_build import build_review_store
from projection.review_digest import row_line
from projection.review_layout import FOLD_SQL, RECORD_COLUMNS, TEXT_COLUMNS
from projection.review_query import RecordFilter, read_records
from projection.review_rows import ordinal_line, project
from tests.projection.interrupted_build import assert_old_store_serves, built_with_one_record
from tests.projection.review_records import new_project, pull_request, thread, write_lake
from theurian.text import ascii_fold

# Letters either side of A–Z in every script DuckDB's `lower` would fold and `translate` must not: Latin-1,
# Greek, Cyrillic, the Kelvin sign, dotted I, fullwidth letters; NUL and other controls; astral characters.
TEXTS = st.text(alphabet=st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0x7F),
    st.sampled_from("ÀÉÎÕÜßàéîõüΣσςДдKİıＡａ\u0130\U0001d400😀"),
    st.characters(blacklist_categories=("Cs",)),
), max_size=40)

_fold_connection = duckdb.connect()


@settings(max_examples=400, deadline=None)
@given(body=TEXTS)
def test_the_sql_fold_folds_exactly_the_26_ascii_letters_as_the_python_fold_does(body: str) -> None:
    row = _fold_connection.execute(f"SELECT {FOLD_SQL} FROM (SELECT ? AS body)", [body]).fetchone()
    assert row is not None and row[0] == ascii_fold(body)


def test_a_rendered_row_is_the_row_line_of_the_same_row_byte_for_byte() -> None:
    record = thread("Acme/Alpha", 7, "PRRT_x", bodies=("Ünïcode \u2028 and \"quotes\"", "TWO"))
    projected = project("sha256-x/review-thread/PRRT_x.0.json", record, LastSeen("01RUN", "2026-01-01T00:00:00Z"),
                        "sha256:" + "0" * 64)
    line = ordinal_line(41, projected.record_tail)
    assert line.startswith(b'{"ordinal":41,"record_path":')
    values = orjson.loads(line)
    assert line == row_line(RECORD_COLUMNS, [values[name] for name in RECORD_COLUMNS])
    for position, tail in enumerate(projected.text_tails):
        text = orjson.loads(ordinal_line(41, tail))
        assert text["position"] == position
        assert ordinal_line(41, tail) == row_line(TEXT_COLUMNS, [text[name] for name in TEXT_COLUMNS])


@pytest.mark.parametrize("failing", ["texts", "embedding_model"])  # what the pairs wait for; one loaded beside them
def test_a_load_that_fails_stops_the_build_and_leaves_the_old_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str) -> None:
    root = built_with_one_record(tmp_path)
    write_lake(root, [pull_request("Acme/Alpha", 2, "PR_new", body="a new one")])
    real_load = review_load._load

    def failing_load(connection: duckdb.DuckDBPyConnection, table: str, columns: tuple[str, ...],
                     source: Path) -> None:
        if table == failing:
            raise duckdb.IOException("the disk filled up")
        real_load(connection, table, columns, source)

    monkeypatch.setattr(review_load, "_load", failing_load)
    with pytest.raises(duckdb.IOException, match="disk filled"):
        build_review_store(root)
    assert_old_store_serves(root, "review-load")
    assert_old_store_serves(root, "review-pairs")


# Before the texts are written (the pairs thread still waits for them), as they load, and once the pairs build.
@pytest.mark.parametrize("failing", ["records", "texts", "word_blocks", "embedding_model"])
def test_a_write_that_fails_while_loads_run_stops_them_and_leaves_the_old_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str) -> None:
    root = built_with_one_record(tmp_path)
    write_lake(root, [pull_request("Acme/Alpha", 2, "PR_new", body="a new one")])
    real_write = review_load._write_table

    def failing_write(folder: Path, table: str, *rest: Any) -> object:
        if table == failing:
            raise KeyboardInterrupt  # Ctrl-C while the earlier tables load on the loader thread
        return real_write(folder, table, *rest)

    monkeypatch.setattr(review_load, "_write_table", failing_write)
    with pytest.raises(KeyboardInterrupt):
        build_review_store(root)
    assert_old_store_serves(root, "review-load")
    assert_old_store_serves(root, "review-pairs")


def test_a_table_of_more_lines_than_a_file_holds_loads_every_line_in_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(review_load, "FILE_ROWS", 3)
    root = new_project(tmp_path / "p")
    write_lake(root, [pull_request("Acme/Alpha", number, f"PR_{number}") for number in range(1, 12)])
    summary = build_review_store(root)
    assert (summary.records, summary.texts) == (11, 22)
    assert [r.record_key for r in read_records(root, RecordFilter(), 50)] == [f"PR_{n}" for n in range(1, 12)]


def test_invalid_files_do_not_hold_their_error_reports_until_the_build_ends(tmp_path: Path) -> None:
    """The collector is paused while a build reads; the reports naming what is wrong with a file refer to each
    other, so without a collection per skipped file 2,000 of them were all held to the end."""
    root = new_project(tmp_path / "p")
    write_lake(root, [thread("Acme/Alpha", 1, "PRRT_fine")])
    folder = next((root / ".theurian/review").glob("sha256-*/review-thread"))
    bad = orjson.loads(next(folder.iterdir()).read_bytes())
    bad["state"], bad["comments"][0]["author"] = 5, 7  # two failures, so jsonschema builds nested errors
    for index in range(2000):
        (folder / f"bad_{index}.0.json").write_bytes(orjson.dumps(bad))
    tracemalloc.start()
    try:
        summary = build_review_store(root, processes=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (summary.records, len(summary.skipped)) == (1, 2000)
    assert peak < 8_000_000, f"peak {peak / 1e6:.1f} MB"  # 1.2 MB measured; 19.7 MB without the collection


def test_ctrl_c_while_waiting_for_the_last_load_stops_it_and_leaves_the_old_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The load is interrupted even when the Ctrl-C comes before it reaches DuckDB (the first interrupt then
    finds nothing to stop): abandoning keeps interrupting until the connection is free."""
    root = built_with_one_record(tmp_path)
    write_lake(root, [pull_request("Acme/Alpha", 2, "PR_new", body="a new one")])
    real_load = review_load._load
    about_to_run = threading.Event()
    outcome: list[str] = []

    def slow_load(connection: duckdb.DuckDBPyConnection, table: str, columns: tuple[str, ...],
                  sources: list[Path]) -> None:
        if table == "word_blocks":
            about_to_run.set()
            time.sleep(0.3)  # the Ctrl-C lands now, before the statement starts
            try:
                connection.execute("SELECT sum(i) FROM range(20000000000) t(i)")  # ~15 s here unless interrupted
            except duckdb.InterruptException:
                outcome.append("interrupted")
                raise
            outcome.append("ran to its end")
        real_load(connection, table, columns, sources)

    def interrupted_finish(self: review_load.Loader) -> None:
        assert about_to_run.wait(10)
        raise KeyboardInterrupt  # Ctrl-C reaches the build while it waits on the loader thread

    monkeypatch.setattr(review_load, "_load", slow_load)
    monkeypatch.setattr(review_load.Loader, "finish", interrupted_finish)
    with pytest.raises(KeyboardInterrupt):
        build_review_store(root)
    assert outcome == ["interrupted"]
    assert_old_store_serves(root, "review-load")


def test_a_ctrl_c_that_native_code_swallowed_while_the_lake_was_read_still_stops_the_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """jsonschema-rs was seen to run the SIGINT handler inside its own call and drop the KeyboardInterrupt."""
    root = built_with_one_record(tmp_path)
    write_lake(root, [pull_request("Acme/Alpha", 2, "PR_new", body="a new one")])
    real_check = fast_check.record_check("pull-request")

    def swallowing_check(record: Any) -> bool:
        if record["recordKey"] == "PR_new":
            try:
                signal.raise_signal(signal.SIGINT)  # Ctrl-C, inside the native call
            except KeyboardInterrupt:
                pass  # ... which the native code drops
        return real_check(record)

    monkeypatch.setattr(validation, "record_check", lambda kind: swallowing_check)
    with pytest.raises(KeyboardInterrupt):
        build_review_store(root, processes=1)
    assert_old_store_serves(root, "review-load")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the build put Python's handler back


def test_a_ctrl_c_duckdb_reports_as_its_own_error_is_an_interrupt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = built_with_one_record(tmp_path)

    def interrupted(*_: Any) -> int:
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")  # Ctrl-C during CHECKPOINT, say

    monkeypatch.setattr(review_build, "_write_store", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_review_store(root)
    assert_old_store_serves(root, "review-load")


def test_a_ctrl_c_once_the_new_store_is_swapped_in_is_ignored_and_the_build_is_reported_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the swap nothing can keep the old store, so the build has happened: exiting 130 would report a
    build that did replace the store as interrupted."""
    root = built_with_one_record(tmp_path)
    write_lake(root, [pull_request("Acme/Alpha", 2, "PR_new", body="a new one")])
    real_publish = review_build.publish_built_file

    def publish_then_ctrl_c(*args: Any) -> None:
        real_publish(*args)
        signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(review_build, "publish_built_file", publish_then_ctrl_c)
    summary = build_review_store(root)
    assert summary.records == 2
    assert [r.record_key for r in read_records(root, RecordFilter(), 10)] == ["PR_old", "PR_new"]


def test_a_row_of_fewer_or_more_values_than_its_columns_is_refused_not_cut() -> None:
    line = row_line(TEXT_COLUMNS, (1, 0, "comment", "x"))
    assert line == b'{"ordinal":1,"position":0,"channel":"comment","body":"x"}\n'
    with pytest.raises(ValueError, match="a row of 3 values for 4 columns"):
        row_line(TEXT_COLUMNS, (1, 0, "comment"))
    with pytest.raises(ValueError, match="a row of 5 values for 4 columns"):
        row_line(TEXT_COLUMNS, (1, 0, "comment", "x", "y"))
