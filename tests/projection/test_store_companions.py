"""What lies beside or in place of the review store and its lake: a planted write-ahead log, a FIFO, a folder
or a file where a folder belongs. Each is refused or skipped; none is ever read as if it were the store."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import duckdb
import orjson
import pytest

import projection.review_store as review_store
from projection.errors import ReviewLakeNotAFolder, ReviewStoreUnavailable
from projection.review_build import BuildSummary, build_review_store
from projection.review_query import RecordFilter, read_records
from projection.review_store import open_store, store_path
from tests.projection.review_records import copy_fixture_lake, new_project, pull_request, write_lake
from theurian.stamped_store import DUCKDB_WAL_SUFFIX, WAL_BESIDE, VerifiedStores


def _built(tmp_path: Path, name: str = "p") -> Path:
    root = new_project(tmp_path / name)
    copy_fixture_lake(root)
    build_review_store(root)
    return root


def _planted_wal(live: Path, work: Path) -> Path:
    """A WAL made by opening a byte-identical copy of the store and updating it without a checkpoint."""
    copy = work / live.name
    shutil.copy(live, copy)
    connection = duckdb.connect(str(copy))
    connection.execute("PRAGMA disable_checkpoint_on_shutdown")
    connection.execute("SET checkpoint_threshold = '10GB'")
    connection.execute("UPDATE texts SET body = 'EVIL'")
    connection.close()
    wal = copy.with_name(copy.name + DUCKDB_WAL_SUFFIX)
    assert wal.is_file()
    return wal


def test_a_planted_wal_beside_a_verified_store_is_refused_never_replayed(tmp_path: Path) -> None:
    root = _built(tmp_path)
    # verified here: the verification record now vouches for it
    assert read_records(root, RecordFilter(), 50, stores=VerifiedStores())
    live = store_path(root)
    work = tmp_path / "work"
    work.mkdir()
    wal = _planted_wal(live, work)
    fresh = VerifiedStores()  # what a fresh daemon starts with: no store opened yet (the record stays)
    shutil.copy(wal, live.with_name(live.name + DUCKDB_WAL_SUFFIX))
    with pytest.raises(ReviewStoreUnavailable, match=WAL_BESIDE):
        read_records(root, RecordFilter(), 50, stores=fresh)
    with pytest.raises(ReviewStoreUnavailable, match=WAL_BESIDE):
        read_records(root, RecordFilter(q_folded="evil"), 50, stores=fresh)


def test_a_wal_that_appears_beside_an_open_store_is_refused_too(tmp_path: Path) -> None:
    root = _built(tmp_path)
    stores = VerifiedStores()
    assert read_records(root, RecordFilter(), 50, stores=stores)
    live = store_path(root)
    live.with_name(live.name + DUCKDB_WAL_SUFFIX).write_bytes(b"")
    with pytest.raises(ReviewStoreUnavailable, match=WAL_BESIDE):
        open_store(root, stores)


def test_the_verification_record_does_not_vouch_for_a_store_with_a_wal_beside_it(tmp_path: Path) -> None:
    from projection.review_digest import remember_verified, was_verified
    store = tmp_path / "store.duckdb"
    store.write_bytes(b"x")
    identity = (1, 2, 3, 4, 5)
    remember_verified(store, identity, "build", "stamp", b"secret")
    assert was_verified(store, identity, "build", "stamp", b"secret")
    (tmp_path / "store.duckdb.wal").write_bytes(b"")
    assert not was_verified(store, identity, "build", "stamp", b"secret")


@pytest.mark.parametrize("shape", ["file", "link", "folder"])
def test_a_rebuild_removes_a_leftover_wal_so_its_cure_cures(tmp_path: Path, shape: str) -> None:
    root = _built(tmp_path)
    live = store_path(root)
    wal = live.with_name(live.name + DUCKDB_WAL_SUFFIX)
    outside = tmp_path / "outside.wal"
    outside.write_bytes(b"not ours to remove")
    if shape == "file":
        wal.write_bytes(b"leftover")
    elif shape == "link":
        wal.symlink_to(outside)
    else:
        wal.mkdir()
        (wal / "inside").symlink_to(outside)
    with pytest.raises(ReviewStoreUnavailable):
        read_records(root, RecordFilter(), 50)
    build_review_store(root)
    assert not os.path.lexists(wal)
    assert read_records(root, RecordFilter(), 50)
    assert outside.read_bytes() == b"not ours to remove"  # a link is removed as a link, never followed


def _unblock_fifo(fifo: Path) -> None:
    """Open the write end once, so a reader stuck opening the FIFO (the unfixed code) returns."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass  # nobody is reading it: nothing is stuck


def test_a_fifo_at_the_store_path_is_refused_without_being_opened(tmp_path: Path) -> None:
    root = _built(tmp_path)
    live = store_path(root)
    live.unlink()
    os.mkfifo(live)
    outcome: list[str] = []

    def attempt() -> None:
        try:
            open_store(root)
        except ReviewStoreUnavailable as exc:
            outcome.append(exc.reason)
        except Exception as exc:
            outcome.append(f"raised {type(exc).__name__}")
        else:
            outcome.append("opened")

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=60)  # a hang guard, not a measurement: the fixed code never opens the FIFO
    blocked = worker.is_alive()
    _unblock_fifo(live)
    worker.join()
    assert not blocked, "opening a FIFO store blocked"
    assert outcome == ["not a regular file"]


def test_one_projects_blocked_open_does_not_hold_up_another_projects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow, other = _built(tmp_path, "slow"), _built(tmp_path, "other")
    stores = VerifiedStores()  # one daemon's cache, serving both projects
    original = review_store._attach_and_verify
    entered, release = threading.Event(), threading.Event()
    slow_store = store_path(slow)

    def attach(path: Path, identity: tuple[int, ...], secret: bytes) -> review_store.OpenStore:
        if path == slow_store:
            entered.set()
            release.wait()  # an open DuckDB is stuck in (a FIFO swapped in, a slow disk)
        return original(path, identity, secret)

    monkeypatch.setattr(review_store, "_attach_and_verify", attach)
    blocked = threading.Thread(target=open_store, args=(slow, stores), daemon=True)
    blocked.start()
    entered.wait()
    answered = threading.Event()
    rows: list[int] = []

    def search_other() -> None:
        rows.append(len(read_records(other, RecordFilter(), 50, stores=stores)))
        answered.set()

    searcher = threading.Thread(target=search_other, daemon=True)
    searcher.start()
    finished = answered.wait(timeout=60)  # a hang guard: the other project's search does not wait on `slow`
    release.set()
    searcher.join()
    blocked.join()
    assert finished, "another project's search waited for a blocked open"
    assert rows and rows[0] > 0


def _build_unblocking(root: Path, fifos: list[Path]) -> BuildSummary:
    """Build, opening each FIFO's write end if the build is stuck reading one (the unfixed code), so a
    regression fails this test instead of hanging it."""
    outcome: list[BuildSummary] = []
    worker = threading.Thread(target=lambda: outcome.append(build_review_store(root)), daemon=True)
    worker.start()
    worker.join(timeout=60)  # a hang guard, not a measurement
    blocked = worker.is_alive()
    for fifo in fifos:
        _unblock_fifo(fifo)
    worker.join()
    assert not blocked, "the build blocked reading a FIFO"
    return outcome[0]


def test_a_fifo_a_folder_or_a_link_out_in_the_lake_is_reported_and_skipped(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    copy_fixture_lake(root)
    paths = write_lake(root, [pull_request("o/r", 1, "PR_fifo"), pull_request("o/r", 2, "PR_dir"),
                              pull_request("o/r", 3, "PR_link"), pull_request("o/r", 4, "PR_kept")])
    lake = root / ".theurian/review"
    fifo, folder, link = (lake / path for path in paths[:3])
    outside = tmp_path / "outside.json"
    outside.write_bytes(link.read_bytes())
    for entry in (fifo, folder, link):
        entry.unlink()
    os.mkfifo(fifo)
    folder.mkdir()
    link.symlink_to(outside)
    summary = _build_unblocking(root, [fifo])
    skipped = dict(summary.skipped)
    assert skipped[f".theurian/review/{paths[0]}"] == "not a regular file"
    assert skipped[f".theurian/review/{paths[1]}"] == "not a regular file"
    assert skipped[f".theurian/review/{paths[2]}"].startswith("a link out of .theurian/review")
    assert [r.record_key for r in read_records(root, RecordFilter(repository="o/r"), 50)] == ["PR_kept"]


def test_a_run_manifest_that_is_a_fifo_or_a_link_out_is_reported_and_skipped(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    copy_fixture_lake(root)
    runs = root / ".theurian/review/runs"
    outside = tmp_path / "outside.json"
    outside.write_bytes(next(runs.iterdir()).read_bytes())
    fifo = runs / "01K4YQ7N2B3C4D5E6F7G8H9JZZ.json"
    os.mkfifo(fifo)
    (runs / "01K4YQ7N2B3C4D5E6F7G8H9JZY.json").symlink_to(outside)
    summary = _build_unblocking(root, [fifo])
    skipped = dict(summary.skipped)
    assert skipped[".theurian/review/runs/01K4YQ7N2B3C4D5E6F7G8H9JZZ.json"] == "not a regular file"
    assert skipped[".theurian/review/runs/01K4YQ7N2B3C4D5E6F7G8H9JZY.json"].startswith(
        "a link out of .theurian/review")
    assert summary.records > 0


def test_a_lake_that_is_a_file_is_refused_naming_it_and_the_old_store_is_kept(tmp_path: Path) -> None:
    root = _built(tmp_path)
    before = store_path(root).read_bytes()
    shutil.rmtree(root / ".theurian/review")
    (root / ".theurian/review").write_bytes(b"not a folder")
    with pytest.raises(ReviewLakeNotAFolder) as caught:
        build_review_store(root)
    assert ".theurian/review is not a folder" in caught.value.message
    assert "\n" not in caught.value.message
    assert store_path(root).read_bytes() == before
    assert read_records(root, RecordFilter(), 50)


def test_an_integral_float_pull_request_is_built_and_stored_as_the_int(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    [path] = write_lake(root, [pull_request("o/r", 5, "PR_float")])
    file = root / ".theurian/review" / path
    record = orjson.loads(file.read_bytes())
    record["pullRequest"] = 5.0
    file.write_bytes(orjson.dumps(record))
    summary = build_review_store(root)
    assert summary.skipped == [] and summary.records == 1
    [stored] = read_records(root, RecordFilter(pull_request=5), 50)
    assert stored.pull_request == 5 and type(stored.pull_request) is int
