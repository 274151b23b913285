"""What lies beside or in place of the review store and its lake: a planted write-ahead log, a FIFO, a folder
or a file where a folder belongs. Each is refused or skipped; none is ever read as if it were the store."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pytest

import projection.review_store as review_store
from projection.review_build import build_review_store
from projection.review_query import RecordFilter, read_records
from projection.review_store import ReviewStoreUnavailable, open_store, store_path
from tests.projection.review_records import copy_fixture_lake, new_project

WAL_SUFFIX = ".wal"


def _built(tmp_path: Path, name: str = "p") -> Path:
    root = new_project(tmp_path / name)
    copy_fixture_lake(root)
    build_review_store(root)
    return root


def _forget_open_stores() -> None:
    """What a fresh daemon starts with: no store opened yet (the verification record stays)."""
    for opened in review_store._open_stores.values():
        opened.connection.close()
    review_store._open_stores.clear()


def _planted_wal(live: Path, work: Path) -> Path:
    """A WAL made by opening a byte-identical copy of the store and updating it without a checkpoint."""
    copy = work / live.name
    shutil.copy(live, copy)
    connection = duckdb.connect(str(copy))
    connection.execute("PRAGMA disable_checkpoint_on_shutdown")
    connection.execute("SET checkpoint_threshold = '10GB'")
    connection.execute("UPDATE texts SET body = 'EVIL'")
    connection.close()
    wal = copy.with_name(copy.name + WAL_SUFFIX)
    assert wal.is_file()
    return wal


def test_a_planted_wal_beside_a_verified_store_is_refused_never_replayed(tmp_path: Path) -> None:
    root = _built(tmp_path)
    assert read_records(root, RecordFilter(), 50)  # verified here: the verification record now vouches for it
    live = store_path(root)
    work = tmp_path / "work"
    work.mkdir()
    wal = _planted_wal(live, work)
    _forget_open_stores()
    shutil.copy(wal, live.with_name(live.name + WAL_SUFFIX))
    with pytest.raises(ReviewStoreUnavailable, match="write-ahead log"):
        read_records(root, RecordFilter(), 50)
    with pytest.raises(ReviewStoreUnavailable, match="write-ahead log"):
        read_records(root, RecordFilter(q_folded="evil"), 50)


def test_a_wal_that_appears_beside_an_open_store_is_refused_too(tmp_path: Path) -> None:
    root = _built(tmp_path)
    assert read_records(root, RecordFilter(), 50)
    live = store_path(root)
    live.with_name(live.name + WAL_SUFFIX).write_bytes(b"")
    with pytest.raises(ReviewStoreUnavailable, match="write-ahead log"):
        open_store(root)


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
    wal = live.with_name(live.name + WAL_SUFFIX)
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
