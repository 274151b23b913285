"""The pieces every derived store shares, over real files: the verify-once helper remembers a check's value or its
refusal per identity and secret, only once the identity has settled and (when asked) still names the file; and
anything at a store's write-ahead-log name refuses the store; a SQLite store opens read-only, never created, with the
lock wait and thread use its caller names."""

from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest

from theurian.errors import StoreFileFault
from theurian.stamped_store import (
    DUCKDB_WAL_SUFFIX,
    SETTLED_NS,
    SQLITE_BUSY_SECONDS,
    SQLITE_WAL_SUFFIX,
    WAL_BESIDE,
    Shelf,
    file_identity,
    open_sqlite_read_only,
    refuse_write_ahead_log,
    remembered,
    wal_path,
)

SECRET = b"secret"


class Refused(Exception):  # noqa: N818 - a check's refusal, as each store names its own
    pass


class Counted:
    """A check that counts its calls, answering `value` or raising `error`."""

    def __init__(self, value: object = "verdict", error: Exception | None = None) -> None:
        self.calls = 0
        self.value = value
        self.error = error

    def __call__(self) -> object:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return self.value


def _store(tmp_path: Path) -> tuple[Path, tuple[int, ...], int]:
    path = tmp_path / "store.sqlite"
    path.write_bytes(b"rows")
    identity = file_identity(path)
    return path, identity, max(identity[3], identity[4]) + SETTLED_NS


def test_a_settled_files_verdict_is_checked_once_and_then_remembered(tmp_path: Path) -> None:
    path, identity, later = _store(tmp_path)
    shelf: Shelf[object] = Shelf()
    check = Counted()
    for _ in range(3):
        assert remembered(shelf, str(path), identity, SECRET, check, still_at=path, now_ns=later) == "verdict"
    assert check.calls == 1


@pytest.mark.parametrize(("error", "checks"), [
    (Refused("damaged"), 1),  # a named refusal is the verdict: remembered, and raised again without checking
    (OSError("damaged"), 2),  # any other exception says nothing about the file: never remembered
])
def test_a_named_refusal_is_remembered_and_any_other_exception_is_not(
        tmp_path: Path, error: Exception, checks: int) -> None:
    path, identity, later = _store(tmp_path)
    shelf: Shelf[object] = Shelf()
    check = Counted(error=error)
    for _ in range(2):
        with pytest.raises(type(error), match="damaged"):
            remembered(shelf, str(path), identity, SECRET, check, refusals=(Refused,), now_ns=later)
    assert check.calls == checks and len(shelf) == 2 - checks


def test_a_verdict_is_remembered_from_exactly_the_settling_time_and_not_a_nanosecond_before(tmp_path: Path) -> None:
    path, identity, later = _store(tmp_path)
    shelf: Shelf[object] = Shelf()
    remembered(shelf, str(path), identity, SECRET, Counted(), now_ns=later - 1)
    assert len(shelf) == 0
    remembered(shelf, str(path), identity, SECRET, Counted(), now_ns=later)
    assert len(shelf) == 1


def test_an_unknown_identity_is_checked_on_every_call(tmp_path: Path) -> None:
    path, _, later = _store(tmp_path)
    shelf: Shelf[object] = Shelf()
    check = Counted()
    for _ in range(2):
        remembered(shelf, str(path), None, SECRET, check, now_ns=later)
    assert check.calls == 2 and len(shelf) == 0


def test_a_file_swapped_while_it_was_checked_is_not_remembered_under_the_identity_taken_before(tmp_path: Path) -> None:
    path, identity, later = _store(tmp_path)
    shelf: Shelf[object] = Shelf()
    swapped = tmp_path / "swapped"
    swapped.write_bytes(b"other rows")

    def check() -> str:
        os.replace(swapped, path)
        return "verdict of the file swapped in"

    remembered(shelf, str(path), identity, SECRET, check, still_at=path, now_ns=later)
    assert len(shelf) == 0


def test_another_secret_or_another_identity_is_checked_afresh(tmp_path: Path) -> None:
    path, identity, later = _store(tmp_path)
    shelf: Shelf[object] = Shelf()
    check = Counted()
    remembered(shelf, str(path), identity, SECRET, check, now_ns=later)
    remembered(shelf, str(path), identity, b"rotated", check, now_ns=later)
    remembered(shelf, str(path), (*identity[:2], identity[2] + 1, *identity[3:]), b"rotated", check, now_ns=later)
    assert check.calls == 3


@pytest.mark.parametrize("suffix", [SQLITE_WAL_SUFFIX, DUCKDB_WAL_SUFFIX])
@pytest.mark.parametrize("shape", ["file", "empty file", "folder", "dangling link"])
def test_anything_at_a_stores_write_ahead_log_name_refuses_the_store(tmp_path: Path, suffix: str, shape: str) -> None:
    path, _, _ = _store(tmp_path)
    refuse_write_ahead_log(path, suffix)  # nothing there: the store may be read
    wal = wal_path(path, suffix)
    assert wal.name == path.name + suffix
    if shape == "file":
        wal.write_bytes(b"frames")
    elif shape == "empty file":
        wal.write_bytes(b"")
    elif shape == "folder":
        wal.mkdir()
    else:
        wal.symlink_to(tmp_path / "nowhere")
    with pytest.raises(StoreFileFault) as refused:
        refuse_write_ahead_log(path, suffix)
    assert refused.value.reason == WAL_BESIDE


def _sqlite_store(path: Path) -> Path:
    with closing(sqlite3.connect(path)) as writer:
        writer.execute("CREATE TABLE t (v TEXT)")
        writer.execute("INSERT INTO t VALUES ('row')")
        writer.commit()
    return path


def test_a_sqlite_store_opened_read_only_reads_its_rows_and_refuses_a_write(tmp_path: Path) -> None:
    path = _sqlite_store(tmp_path / "store.sqlite")
    before = path.read_bytes()
    with closing(open_sqlite_read_only(path, timeout=SQLITE_BUSY_SECONDS, check_same_thread=True)) as reader:
        assert reader.execute("SELECT v FROM t").fetchall() == [("row",)]
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.execute("INSERT INTO t VALUES ('more')")
    assert path.read_bytes() == before


def test_a_read_only_open_of_nothing_creates_no_file(tmp_path: Path) -> None:
    missing = tmp_path / "absent.sqlite"
    with pytest.raises(sqlite3.OperationalError):
        open_sqlite_read_only(missing, timeout=SQLITE_BUSY_SECONDS, check_same_thread=True)
    assert not missing.exists()


def test_a_read_only_open_waits_on_a_lock_as_long_as_its_caller_says(tmp_path: Path) -> None:
    path = _sqlite_store(tmp_path / "store.sqlite")
    with closing(open_sqlite_read_only(path, timeout=0.25, check_same_thread=True)) as reader:
        assert reader.execute("PRAGMA busy_timeout").fetchone() == (250,)


def test_the_named_busy_wait_is_sqlite3s_own_default(tmp_path: Path) -> None:
    path = _sqlite_store(tmp_path / "store.sqlite")
    with closing(sqlite3.connect(path)) as plain, closing(
        open_sqlite_read_only(path, timeout=SQLITE_BUSY_SECONDS, check_same_thread=True)
    ) as reader:
        assert reader.execute("PRAGMA busy_timeout").fetchone() == plain.execute("PRAGMA busy_timeout").fetchone()


@pytest.mark.parametrize("check_same_thread", [True, False])
def test_a_read_only_connection_is_usable_from_another_thread_only_when_its_caller_says(
    tmp_path: Path, check_same_thread: bool
) -> None:
    path = _sqlite_store(tmp_path / "store.sqlite")
    outcome: list[object] = []

    def read(connection: sqlite3.Connection) -> None:
        try:
            outcome.append(connection.execute("SELECT v FROM t").fetchall())
        except sqlite3.ProgrammingError as exc:
            outcome.append(exc)

    with closing(open_sqlite_read_only(path, timeout=SQLITE_BUSY_SECONDS, check_same_thread=check_same_thread)) as c:
        other = threading.Thread(target=read, args=(c,))
        other.start()
        other.join(timeout=10)
    assert not other.is_alive()
    if check_same_thread:
        assert isinstance(outcome[0], sqlite3.ProgrammingError)
    else:
        assert outcome == [[("row",)]]
