"""Review records as this installation stored them, handed out as values: looked up in the verified review store,
read from the lake, and checked to be the very files the store was built from.

The store is opened through `review_store.open_store`, the path review.search takes, so a store this installation
did not build (or a stale or damaged one) is never believed. The store's `record_path` then names the lake files;
each path is checked against the record-path pattern before it names a file and resolved through `resolve_inside`
(a path that escapes the lake is refused with the cure for source), and read as the build reads (a regular file
only, never waited on, at most 256 MiB: `evidence.files.read_opened`). Its bytes must hash to the `content_sha256`
the store row holds — the hash of the very bytes the build validated and projected, covered by the stamp. A file
edited since the build, in any field (a thread's state, a pull request's CI outcome or merge, a comment, a line
number), is therefore refused as stale rather than believed.

`knowledge/` receives these values (the candidate's gate is computed from them) and never opens the store itself.

    ThreadNotAvailableError    no review thread under that repository and record key (one constant refusal)
    ConcernNotAvailableError   no concern under that id (one constant refusal)
"""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import duckdb
import orjson

from evidence.errors import NotRegularFile
from evidence.lake_read import read_record_file
from evidence.records import (
    FILE_NAME_PATTERN,
    KIND_PULL_REQUEST,
    KIND_REVIEW_THREAD,
    KINDS,
    REPOSITORY_FOLDER_PATTERN,
    content_hash,
)
from projection.errors import ConcernNotAvailableError, ReviewStoreUnavailable, ThreadNotAvailableError
from projection.review_concerns_query import concern_members
from projection.review_store import open_store
from theurian.containment import resolve_inside
from theurian.project import REVIEW_DIR
from theurian.stamped_store import VerifiedStores

RECORD_PATH: Final = re.compile(
    rf"{REPOSITORY_FOLDER_PATTERN.pattern}/({'|'.join(KINDS)})/{FILE_NAME_PATTERN.pattern}"
)
@dataclass(frozen=True)
class StoredRecord:
    record_path: str  # relative to .theurian/review/, as review.search publishes it
    content_hash: str  # sha256: of the file's bytes
    record: dict[str, Any]


@dataclass(frozen=True)
class StoredThread:
    """A stored review thread (or, as a concern's member, a review submission) and its pull request."""

    thread: StoredRecord
    pull_request: StoredRecord | None  # None when the store holds no record of the thread's pull request


@dataclass(frozen=True)
class StoredConcern:
    concern_id: str
    members: list[StoredThread]  # every member, in the store's total order


def load_thread(root: Path, repository: str, record_key: str, stores: VerifiedStores | None = None) -> StoredThread:
    """The thread stored under (`repository`, `record_key`) and its pull request, read from the lake.

    Raises:
        ThreadNotAvailableError: no such thread in the verified store.
        PathEscapeError, ReviewStoreEscapeError: the store path or the lake escapes.
        ReviewStoreUnavailable: the store cannot be served, or a record file it names is missing, or is not the
            file the store was built from.
    """
    stores = stores or VerifiedStores()  # one verification of the store for the thread's and its pull's reads
    rows = _rows(root, "SELECT record_path, content_sha256, kind, pull_request FROM s.records "
                       "WHERE repository = ? AND record_key = ?", [repository, record_key], stores)
    if len(rows) != 1 or rows[0][2] != KIND_REVIEW_THREAD:
        raise ThreadNotAvailableError()
    return _member(root, repository, record_key, rows[0], stores)


def load_concern(root: Path, concern_id: str, stores: VerifiedStores | None = None) -> StoredConcern:
    """Every member of the concern stored under `concern_id`, each with its pull request, read from the lake.

    Raises:
        ConcernNotAvailableError: no such concern in the verified store.
        PathEscapeError, ReviewStoreEscapeError, ReviewStoreUnavailable: as `load_thread`.
    """
    stores = stores or VerifiedStores()  # one verification of the store for every member's reads
    concern = concern_members(root, concern_id, stores)
    if concern is None:
        raise ConcernNotAvailableError()
    members = []
    for member in concern.members:
        rows = _rows(root, "SELECT record_path, content_sha256, kind, pull_request FROM s.records "
                           "WHERE repository = ? AND record_key = ?", [member.repository, member.record_key],
                     stores)
        if len(rows) != 1:
            raise ReviewStoreUnavailable("damaged: a concern member is not one stored record")
        members.append(_member(root, member.repository, member.record_key, rows[0], stores))
    return StoredConcern(concern.concern_id, members)


def stored_hashes(root: Path, stores: VerifiedStores | None = None) -> dict[str, str]:
    """Record path (relative to `.theurian/review/`) -> the content hash of the file the verified store's build
    read it from, for every record the store holds: what `theurian doctor` judges an unchanged file by, unread.

    Raises:
        PathEscapeError, ReviewStoreEscapeError: the store path escapes.
        ReviewStoreUnavailable: the store cannot be served or read.
    """
    return {str(path): str(digest) for path, digest in
            _rows(root, "SELECT record_path, content_sha256 FROM s.records", [], stores)}


def _rows(root: Path, sql: str, params: list[object], stores: VerifiedStores | None) -> list[tuple[Any, ...]]:
    store = open_store(root, stores)
    cursor = store.cursor()
    try:
        return cursor.execute(sql, params).fetchall()
    except duckdb.Error as exc:
        raise ReviewStoreUnavailable(f"unreadable: {type(exc).__name__}") from exc
    finally:
        cursor.close()


def _member(root: Path, repository: str, record_key: str, row: tuple[Any, ...],
            stores: VerifiedStores | None) -> StoredThread:
    path, stored_hash, kind, number = row
    pulls = _rows(root, "SELECT record_path, content_sha256 FROM s.records WHERE repository = ? "
                        "AND pull_request = ? AND kind = ? ORDER BY ordinal LIMIT 1",
                  [repository, number, KIND_PULL_REQUEST], stores)
    lake = resolve_inside(root, REVIEW_DIR)  # PathEscapeError: the lake itself escapes (the cure for source)
    record = _read(lake, str(path), str(stored_hash), str(kind), repository, record_key)
    pull_request = None
    if pulls:
        pull_path, pull_hash = pulls[0]
        pull_request = _read(lake, str(pull_path), str(pull_hash), KIND_PULL_REQUEST, repository, None)
    return StoredThread(record, pull_request)


def _read(lake: Path, record_path: str, stored_hash: str, kind: str, repository: str,
          record_key: str | None) -> StoredRecord:
    """The record file the verified store names, only if its bytes are still the ones the build read: any edit
    since (a thread's state, a pull request's CI outcome, a comment) makes it stale."""
    if RECORD_PATH.fullmatch(record_path) is None:
        raise ReviewStoreUnavailable("damaged: a stored record path does not match the record-path pattern")
    try:
        data = read_record_file(lake, record_path)  # PathEscapeError: named project-relative, the cure for source
    except (NotRegularFile, OSError) as exc:
        raise ReviewStoreUnavailable(f"stale: record file unreadable ({type(exc).__name__})") from exc
    found_hash = content_hash(data)
    if not hmac.compare_digest(found_hash, stored_hash):
        raise ReviewStoreUnavailable("stale: a record file changed since the store was built")
    # The very bytes the build validated and projected into the row the stamp covers: parsed, not checked again.
    record = orjson.loads(data)
    expected_key = record["recordKey"] if record_key is None else record_key
    if (record["kind"], record["repository"], record["recordKey"]) != (kind, repository, expected_key):
        raise ReviewStoreUnavailable("damaged: a record file is not the record the store row names")
    return StoredRecord(record_path, found_hash, record)
