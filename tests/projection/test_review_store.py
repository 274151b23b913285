"""The review store: built from the lake into a stamped DuckDB file, swapped in whole, and trusted by a reader
only when this installation built it from the current schema and format and its rows are the rows stamped."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import orjson
import pytest

from evidence.lake import Lake
from evidence.records import repository_folder
from projection import review_store
from projection.errors import ReviewStoreEscapeError, ReviewStoreUnavailable
from projection.review_build import build_review_store
from projection.review_layout import REVIEW_SCHEMA_VERSION
from projection.review_query import RecordFilter, read_records
from projection.review_store import STORE_RELATIVE, open_store, store_path
from tests.projection.review_records import (
    copy_fixture_lake,
    new_project,
    pull_request,
    tamper_with_store,
    thread,
    write_lake,
)
from theurian.installation import HOME_OVERRIDE_ENV, build_stamp_secret
from theurian.stamp import StampFields, compute_stamp


def _built_fixture(tmp_path: Path) -> Path:
    root = new_project(tmp_path / "p")
    copy_fixture_lake(root)
    build_review_store(root)
    return root


def _all(root: Path) -> list[str]:
    return [r.record_key for r in read_records(root, RecordFilter(), 50)]


def test_the_fixture_lake_builds_one_row_per_record_in_the_total_order(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    copy_fixture_lake(root)
    summary = build_review_store(root)
    assert (summary.records, summary.skipped, summary.store) == (6, [], STORE_RELATIVE)
    assert "6 records" in summary.describe() and "0 invalid files skipped" in summary.describe()
    rows = read_records(root, RecordFilter(), 50)
    assert [(r.kind, r.record_key) for r in rows] == [
        ("pull-request", "PR_kwDOAcme0042"),
        ("review-submission", "PRR_kwDOAcme0001"),
        ("review-submission", "PRR_kwDOAcme0002"),
        ("review-submission", "PRR_kwDOAcme0003"),
        ("review-thread", "PRRT_kwDOAcme0001"),
        ("review-thread", "PRRT_kwDOAcme0002"),
    ]
    first_thread = rows[4]
    assert (first_thread.thread_state, first_thread.file_path, first_thread.author_id,
            first_thread.author_login, first_thread.excerpt_channel) == (
        "resolved", "orders/writer.py", "U_kgDOAAAAAg", "bob-reviewer", "comment")
    assert first_thread.excerpt == "This lock is taken before the reads; a slow read holds it for everyone."


def test_an_invalid_file_is_reported_by_its_project_relative_path_and_skipped(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    paths = write_lake(root, [pull_request("o/r", 1, "PR_good"), thread("o/r", 1, "PRRT_bad")])
    bad = root / ".theurian/review" / paths[1]
    document = orjson.loads(bad.read_bytes())
    document["state"] = "closed"  # outside the thread-state vocabulary
    bad.write_bytes(orjson.dumps(document))
    (root / ".theurian/review" / paths[0]).with_name("PR_torn.0.json").write_bytes(b"{not json")
    summary = build_review_store(root)
    assert summary.records == 1
    assert [path for path, _ in summary.skipped] == sorted(
        [f".theurian/review/{paths[1]}", f".theurian/review/{paths[0].rsplit('/', 1)[0]}/PR_torn.0.json"]
    )
    assert "2 invalid files skipped" in summary.describe()
    assert f"skipped .theurian/review/{paths[1]}: " in summary.describe()
    assert f": {paths[1]}: " not in summary.describe()  # the path once, not again at the head of the reason
    assert _all(root) == ["PR_good"]


def test_last_seen_comes_from_the_newest_manifest_that_lists_the_record(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    [listed, unlisted] = write_lake(root, [pull_request("o/r", 1, "PR_a"), pull_request("o/r", 2, "PR_b")])
    sample = orjson.loads(sorted((Path(__file__).parents[2] / "fixtures/evidence/runs").iterdir())[0].read_bytes())
    lake = Lake(root)
    for run_id, started in (("01K4YQ7N2B3C4D5E6F7G8H9JKA", "2026-05-01T00:00:00.000000+00:00"),
                            ("01K4YQ7N2B3C4D5E6F7G8H9JKB", "2026-05-02T00:00:00.000000+00:00")):
        entry = {"kind": "pull-request", "recordKey": "PR_a", "recordPath": listed, "sha256": "sha256:" + "0" * 64}
        lake.write_manifest(sample | {"runId": run_id, "startedAt": started, "records": [entry],
                                      "repository": "o/r", "repositoryFolder": repository_folder("o/r")})
    build_review_store(root)
    rows = {r.record_path: r for r in read_records(root, RecordFilter(), 50)}
    assert (rows[listed].last_seen_run_id, rows[listed].last_seen_at) == (
        "01K4YQ7N2B3C4D5E6F7G8H9JKB", "2026-05-02T00:00:00.000000+00:00")
    assert (rows[unlisted].last_seen_run_id, rows[unlisted].last_seen_at) == (None, None)


def test_an_absent_store_is_unavailable(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    with pytest.raises(ReviewStoreUnavailable) as caught:
        open_store(root)
    assert caught.value.reason == "absent"


def test_a_store_with_no_stamp_table_is_unavailable(tmp_path: Path) -> None:
    root = _built_fixture(tmp_path)
    tamper_with_store(root, ["DROP TABLE build_stamp"])
    with pytest.raises(ReviewStoreUnavailable, match="no build stamp"):
        open_store(root)


def test_a_store_built_by_another_installation_is_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = new_project(tmp_path / "p")
    copy_fixture_lake(root)
    with monkeypatch.context() as other:
        other.setenv(HOME_OVERRIDE_ENV, str(tmp_path / "another-installation"))
        build_review_store(root)
        assert _all(root)  # the installation that built it serves it
    with pytest.raises(ReviewStoreUnavailable, match="did not make"):
        open_store(root)


@pytest.mark.parametrize(("column", "reason"), [("schema_version", "store schema"),
                                                 ("format_version", "evidence format")])
def test_a_genuinely_stamped_store_of_a_superseded_version_is_unavailable(
    tmp_path: Path, column: str, reason: str
) -> None:
    root = _built_fixture(tmp_path)
    with duckdb.connect(str(store_path(root)), read_only=True) as connection:
        *values, _ = connection.execute("SELECT * FROM build_stamp").fetchall()[0]
    fields = StampFields(*values)
    old = StampFields(**{**fields.__dict__, column: getattr(fields, column) - 1})
    tamper_with_store(root, [f"UPDATE build_stamp SET {column} = {getattr(old, column)}, "
                    f"stamp = '{compute_stamp(old, build_stamp_secret())}'"])
    with pytest.raises(ReviewStoreUnavailable, match=reason):
        open_store(root)


def test_an_unreadable_store_is_unavailable(tmp_path: Path) -> None:
    root = _built_fixture(tmp_path)
    store_path(root).write_bytes(b"this is not a database" * 100)
    with pytest.raises(ReviewStoreUnavailable, match="unreadable"):
        open_store(root)


@pytest.mark.parametrize("statement", [
    "UPDATE texts SET body = 'planted' WHERE ordinal = 4 AND position = 0",
    "UPDATE records SET repository = 'Evil/Repo' WHERE ordinal = 0",
    "DELETE FROM texts WHERE ordinal = 5",
    "UPDATE word_blocks SET words = 'planted' WHERE block = 0",
])
def test_a_store_with_one_value_tampered_is_unavailable(tmp_path: Path, statement: str) -> None:
    root = _built_fixture(tmp_path)
    assert _all(root)
    tamper_with_store(root, [statement])
    with pytest.raises(ReviewStoreUnavailable, match="damaged"):
        open_store(root)


_TEXTS_COPY = ["CREATE TABLE texts_copy AS SELECT * FROM texts", "DROP TABLE texts"]


@pytest.mark.parametrize("statements", [
    # A view that shows the digest queries (ORDER BY ordinal) the real rows and every other query planted ones.
    ["ALTER TABLE records RENAME TO records_real",
     "CREATE VIEW records AS SELECT * REPLACE (CASE WHEN current_query() LIKE '%ORDER BY ordinal%' "
     "THEN repository ELSE 'Evil/Planted' END AS repository) FROM records_real"],
    # The same rows under a collation: the digest would pass, and every `q` would compare case-insensitively.
    [*_TEXTS_COPY, "CREATE TABLE texts (ordinal BIGINT NOT NULL, position INTEGER NOT NULL, channel VARCHAR NOT "
     "NULL, body VARCHAR COLLATE nocase USING COMPRESSION zstd NOT NULL)",
     "INSERT INTO texts SELECT * FROM texts_copy", "DROP TABLE texts_copy"],
    ["CREATE TABLE extra (x INTEGER)"],
    ["CREATE MACRO planted(a) AS a"],
    ["CREATE SCHEMA planted"],
])
def test_a_store_whose_tables_are_not_the_ones_a_build_creates_is_unavailable(
        tmp_path: Path, statements: list[str]) -> None:
    root = _built_fixture(tmp_path)
    tamper_with_store(root, statements)
    with pytest.raises(ReviewStoreUnavailable, match="damaged"):
        open_store(root)


def test_a_store_linked_outside_the_state_folder_is_refused_by_the_reader_and_by_the_build(tmp_path: Path) -> None:
    root = _built_fixture(tmp_path)
    outside = tmp_path / "planted.duckdb"
    shutil.copy(store_path(root), outside)
    os.unlink(root / STORE_RELATIVE)
    (root / STORE_RELATIVE).symlink_to(outside)
    with pytest.raises(ReviewStoreEscapeError):
        open_store(root)
    with pytest.raises(ReviewStoreEscapeError):
        build_review_store(root)
    assert (root / STORE_RELATIVE).is_symlink()  # the build stopped before it wrote anything


def test_a_rebuild_swaps_in_a_new_file_and_a_reader_of_the_old_one_keeps_reading_it(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, [pull_request("o/r", 1, "PR_first")])
    build_review_store(root)
    old = open_store(root)
    write_lake(root, [pull_request("o/r", 2, "PR_second")])
    build_review_store(root)
    held = old.cursor()
    assert held.execute("SELECT record_key FROM s.records ORDER BY ordinal").fetchall() == [("PR_first",)]
    assert _all(root) == ["PR_first", "PR_second"]
    assert REVIEW_SCHEMA_VERSION == 7


def test_a_store_swapped_in_between_the_look_and_the_attach_is_opened_not_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two builds finishing close together swapped a file in while a reader attached the last one: the reader
    answered the store-unavailable constant, whose cure is a build, though the store was fine."""
    root = new_project(tmp_path / "p")
    write_lake(root, [pull_request("o/r", 1, "PR_first")])
    build_review_store(root)
    newer = tmp_path / "newer.duckdb"
    write_lake(root, [pull_request("o/r", 2, "PR_second")])
    build_review_store(root)
    shutil.copy2(store_path(root), newer)  # a genuine second build's file, published below mid-open
    write_lake(root, [pull_request("o/r", 3, "PR_third")])
    build_review_store(root)
    real_identity = review_store.file_identity
    looks: list[int] = []

    def identity_then_swap(path: Path) -> tuple[int, ...]:
        looks.append(1)
        if len(looks) == 2:  # the look taken just after the attach: a build publishes its file first
            os.replace(newer, path)
        return real_identity(path)

    monkeypatch.setattr(review_store, "file_identity", identity_then_swap)
    opened = open_store(root)
    monkeypatch.undo()
    assert opened.connection.execute("SELECT count(*) FROM s.records").fetchone() == (2,)  # the swapped-in store
