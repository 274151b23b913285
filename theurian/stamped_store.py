"""What every derived store shares: the identity of its file, where a build publishes it, and the verify-once
cache of stores already trusted.

Three stores are derived, immutable once built, and swapped in whole by a rebuild: the review store (DuckDB), the
findings store and the knowledge state (SQLite). Each carries a build stamp (`theurian.stamp`) that a reader
checks before it trusts a row; which further checks each needs is in docs/decisions.md ("One stamped-store
mechanism").

    file_identity(path)        (device, inode, size, mtime, ctime) of a regular file; StoreFileFault otherwise
    publish_path(root, name)   the state folder's own entry for a store, the leaf left unresolved
    settled(identity)          whether the file's times are old enough to name its content (see SETTLED_NS)
    refuse_write_ahead_log(path, suffix)
                               StoreFileFault(WAL_BESIDE) when anything lies at the store's write-ahead-log name
    open_sqlite_read_only(path, timeout=, check_same_thread=)
                               a SQLite store (the knowledge state, its index, the findings store) opened
                               read-only, never created
    VerifiedStores             the verify-once cache: one per serving process, owned by whoever serves
                               (the daemon keeps one for its whole life; a CLI command makes its own)
    remembered(shelf, key, identity, secret, check)
                               a check's verdict (its value, or its refusal) from a shelf, or checked and put there

A store verified once is trusted again only while its file keeps the identity it was verified under, and only
under the secret it was verified with: a rebuild publishes a new inode, an edit in place moves the size or the
modification and change times (a change time cannot be set back by an unprivileged process), and a rotated
secret re-verifies every store.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Generic, TypeVar, cast

from theurian.containment import resolve_inside
from theurian.errors import NotRegularFile, StoreFileFault
from theurian.files import regular_status
from theurian.project import STATE_DIR

Identity = tuple[int, ...]
V = TypeVar("V")

# File times tick coarsely (a few ms), so two writes that close together can leave the same identity behind: an
# identity whose times are this recent does not yet name one content, and a verdict about it is not remembered.
SETTLED_NS: Final = 2_000_000_000
# Stores remembered per kind; the least recently used beyond it is forgotten (and verified again when asked for).
REMEMBERED_STORES: Final = 64
# The write-ahead log beside a database file is its name plus this: SQLite's (the knowledge state, its index and
# the findings store) and DuckDB's (the review store). Each engine reads one when it opens or reads the file,
# read-only included, and no build leaves one: a log changes the rows read without changing the file's identity,
# so a store with one beside it is refused rather than verified, remembered or served.
SQLITE_WAL_SUFFIX: Final = "-wal"
DUCKDB_WAL_SUFFIX: Final = ".wal"
WAL_BESIDE: Final = "damaged: a write-ahead log lies beside it, which no build leaves"
# How long a SQLite read waits on another connection's lock unless its reader says otherwise: `sqlite3.connect`'s
# own default, named so that a reader keeping it says so.
SQLITE_BUSY_SECONDS: Final = 5.0


def file_identity(path: Path) -> Identity:
    """(device, inode, size, mtime, ctime) of the regular file at `path` (links followed).

    Raises:
        StoreFileFault: nothing is there, it is not a regular file (a FIFO would block SQLite or DuckDB opening
            it), or the file system refused the stat.
    """
    try:
        status = regular_status(path)
    except FileNotFoundError:
        raise StoreFileFault("absent") from None
    except NotRegularFile as exc:
        raise StoreFileFault(exc.reason) from None
    except OSError as exc:
        raise StoreFileFault(f"unreadable: {type(exc).__name__}") from exc
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


def settled(identity: Identity, now_ns: int | None = None) -> bool:
    """Whether the file's last modification and change are at least SETTLED_NS old."""
    now = time.time_ns() if now_ns is None else now_ns
    return now - max(identity[3], identity[4]) >= SETTLED_NS


def wal_path(store: Path, suffix: str) -> Path:
    """Where the engine looks for `store`'s write-ahead log (`suffix`: SQLITE_WAL_SUFFIX or DUCKDB_WAL_SUFFIX)."""
    return store.with_name(store.name + suffix)


def refuse_write_ahead_log(store: Path, suffix: str) -> None:
    """Return only when nothing (no file, link, FIFO or folder) lies at `store`'s write-ahead-log name.

    Raises:
        StoreFileFault: WAL_BESIDE; or "unreadable: its write-ahead log: <error>" when its name cannot be looked up.
    """
    try:
        os.lstat(wal_path(store, suffix))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreFileFault(f"unreadable: its write-ahead log: {type(exc).__name__}") from exc
    raise StoreFileFault(WAL_BESIDE)


def open_sqlite_read_only(path: Path, *, timeout: float, check_same_thread: bool) -> sqlite3.Connection:
    """The SQLite database at `path`, opened through a `file:` URI with `mode=ro`: never created where nothing is,
    never written through. `timeout`: how long a read waits on another connection's lock; `check_same_thread`:
    False only where the connection is used from threads other than the opener's.

    Raises:
        sqlite3.Error: SQLite refused to open it (each store's reader turns this into its own refusal).
    """
    return sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=timeout, check_same_thread=check_same_thread)


def publish_path(root: Path, store_name: str, contained: Callable[[Path], Path]) -> Path:
    """Where a build puts the store `store_name`: its own name inside the resolved state folder, the leaf left
    unresolved.

    A clone can carry `.theurian/state/<store>` as a link to another file inside the project: it passes
    containment, and replacing its resolved target would overwrite that file. Replacing the unresolved leaf
    replaces the link itself. `contained(root)` (the store's own resolved, contained path) runs first, so a link
    that escapes keeps its store's refusal.

    Raises:
        PathEscapeError: the state folder leaves the project root; and whatever `contained` raises.
    """
    contained(root)
    return resolve_inside(root, STATE_DIR) / store_name


@dataclass
class _Entry(Generic[V]):
    identity: Identity
    secret: bytes
    value: V


class Shelf(Generic[V]):
    """The verified stores of one kind, by key (a store's path): each value remembered with the file identity and
    the secret it was verified under. Thread-safe; `lock(key)` serialises the opening of one store, never of
    every store (a slow disk under one project holds up only that project's callers)."""

    def __init__(self, capacity: int = REMEMBERED_STORES) -> None:
        self._entries: OrderedDict[str, _Entry[V]] = OrderedDict()
        self._capacity = capacity
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def get(self, key: str, identity: Identity, secret: bytes) -> V | None:
        """The value verified for exactly this file identity under this secret, or None."""
        with self._guard:
            entry = self._entries.get(key)
            if entry is None or (entry.identity, entry.secret) != (identity, secret):
                return None
            self._entries.move_to_end(key)
            return entry.value

    def held(self, key: str) -> tuple[Identity, V] | None:
        """What is remembered under `key` whatever its identity (to release a superseded one), or None."""
        with self._guard:
            entry = self._entries.get(key)
            return None if entry is None else (entry.identity, entry.value)

    def put(self, key: str, identity: Identity, secret: bytes, value: V) -> None:
        with self._guard:
            self._entries[key] = _Entry(identity, secret, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)

    def drop(self, key: str) -> None:
        with self._guard:
            self._entries.pop(key, None)

    def __len__(self) -> int:
        """How many stores are remembered as verified."""
        with self._guard:
            return len(self._entries)


class VerifiedStores:
    """The verify-once cache of every derived store a process serves: one shelf per kind of store.

    There is no process-wide instance: the daemon makes one at start-up and hands it to every call
    (`serve.tooling.ServeSettings.stores`); a caller that passes none to a store's reader gets a verification of
    its own, done in full.
    """

    def __init__(self, capacity: int = REMEMBERED_STORES) -> None:
        self._capacity = capacity
        self._shelves: dict[str, Shelf[Any]] = {}
        self._guard = threading.Lock()

    def shelf(self, kind: str) -> Shelf[Any]:
        """The shelf of `kind` ("review", "findings", "knowledge"), made on first use."""
        with self._guard:
            found = self._shelves.get(kind)
            if found is None:
                found = self._shelves[kind] = Shelf(self._capacity)
            return found


def remembered(shelf: Shelf[Any], key: str, identity: Identity | None, secret: bytes, check: Callable[[], V], *,
               refusals: tuple[type[Exception], ...] = (), still_at: Path | None = None,
               now_ns: int | None = None) -> V:
    """`check()`'s verdict for the file `key` names, remembered in `shelf` under the file's `identity` (taken before
    the file was opened, so a change after that moment is seen by the next call) and `secret`: the value it
    returned, or the exception of `refusals` it raised, which is raised again for as long as it is remembered.

    A verdict is remembered only when the identity is known (None: checked on every call), settled at `now_ns`
    (now when None; see SETTLED_NS), and, with `still_at`, still the identity of the file there after the check
    (a file swapped in while it was checked is checked afresh next time). Any other exception is never remembered.

    Raises:
        whatever `check` raises.
    """
    if identity is not None:
        cached = shelf.get(key, identity, secret)
        if isinstance(cached, refusals):
            raise cached
        if cached is not None:
            return cast(V, cached)
    verdict: V | Exception
    try:
        verdict = check()
    except refusals as exc:
        verdict = exc
    if identity is not None and settled(identity, now_ns) and (still_at is None or _same_file(still_at, identity)):
        shelf.put(key, identity, secret, verdict)
    if isinstance(verdict, refusals):
        raise verdict
    return cast(V, verdict)


def _same_file(path: Path, identity: Identity) -> bool:
    try:
        return file_identity(path) == identity
    except StoreFileFault:  # gone or replaced by something else: the verdict is not remembered
        return False
