"""A review thread as this installation stored it: looked up in the verified review store, read from the lake.

The store is opened through `projection.review_store.open_store`, the path review.search takes, so a store this
installation did not build (or a stale or damaged one) is never believed. The store's `record_path` then names
the lake files; each path is checked against the record-path pattern before it names a file and resolved through
`resolve_inside` (a path that escapes the lake is refused with the cure for source), read as the build reads
(a regular file only, never waited on, at most 256 MiB: `evidence.files.read_opened`), validated against its
evidence schema, and must be the record the store row promised: projected as the build projects it
(`projection.review_rows.project`), it gives exactly the row and the texts the verified store holds. A file
edited since the build (a thread's state, a comment) is therefore refused as stale rather than believed, and the
gate is computed from records the store vouches for, with their hashes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import duckdb
import orjson

from evidence.errors import RecordInvalidError
from evidence.files import NotRegularFile, read_opened
from evidence.records import FILE_NAME_PATTERN, KIND_PULL_REQUEST, KIND_REVIEW_THREAD, content_hash
from evidence.validation import validate_record
from knowledge.errors import KnowledgeError
from projection.review_lake import lake_path
from projection.review_rows import project
from projection.review_store import RECORD_COLUMNS, ReviewStoreUnavailable, open_store
from theurian.containment import resolve_inside
from theurian.project import REVIEW_DIR

RECORD_PATH: Final = re.compile(
    r"sha256-[0-9a-f]{64}/(pull-request|review-submission|review-thread)/" + FILE_NAME_PATTERN.pattern
)
# One constant for an unknown key, a key of another kind and (once private ingestion creates the class) a
# withheld record: what separates them is material the caller was not granted.
THREAD_NOT_AVAILABLE_REFUSAL: Final = (
    "THREAD_NOT_AVAILABLE: this installation's review store holds no review thread under that repository and "
    "recordKey. Take both from a review.search record whose kind is review-thread, exactly as it publishes "
    "them. Nothing was drafted."
)


class ThreadNotAvailableError(KnowledgeError):
    def __init__(self) -> None:
        super().__init__(THREAD_NOT_AVAILABLE_REFUSAL)


@dataclass(frozen=True)
class StoredRecord:
    record_path: str  # relative to .theurian/review/, as review.search publishes it
    content_hash: str  # sha256: of the file's bytes
    record: dict[str, Any]


@dataclass(frozen=True)
class StoredThread:
    thread: StoredRecord
    pull_request: StoredRecord | None  # None when the store holds no record of the thread's pull request


def load_thread(root: Path, repository: str, record_key: str) -> StoredThread:
    """The thread stored under (`repository`, `record_key`) and its pull request, read from the lake.

    Raises:
        ThreadNotAvailableError: no such thread in the verified store.
        PathEscapeError, ReviewStoreEscapeError: the store path escapes.
        ReviewStoreUnavailable: the store cannot be served, or a record file it names is missing or invalid.
    """
    store = open_store(root)
    cursor = store.cursor()
    try:
        rows = cursor.execute(
            "SELECT record_path, kind, pull_request FROM s.records WHERE repository = ? AND record_key = ?",
            [repository, record_key],
        ).fetchall()
        if len(rows) != 1 or rows[0][1] != KIND_REVIEW_THREAD:
            raise ThreadNotAvailableError()
        thread_path, _, number = rows[0]
        pulls = cursor.execute(
            "SELECT record_path FROM s.records WHERE repository = ? AND pull_request = ? AND kind = ? "
            "ORDER BY ordinal LIMIT 1",
            [repository, number, KIND_PULL_REQUEST],
        ).fetchall()
        lake = resolve_inside(root, REVIEW_DIR)  # PathEscapeError: the lake itself escapes (the cure for source)
        thread = _read(lake, cursor, str(thread_path), KIND_REVIEW_THREAD, repository, record_key)
        pull_request = None
        if pulls:
            pull_request = _read(lake, cursor, str(pulls[0][0]), KIND_PULL_REQUEST, repository, None)
    except duckdb.Error as exc:
        raise ReviewStoreUnavailable(f"unreadable: {type(exc).__name__}") from exc
    finally:
        cursor.close()
    return StoredThread(thread, pull_request)


# The columns a record's file decides; `ordinal` is the build's, `last_seen_*` come from the run manifests.
_FILE_COLUMNS: Final = tuple(c for c in RECORD_COLUMNS if c != "ordinal" and not c.startswith("last_seen_"))


def _read(lake: Path, cursor: duckdb.DuckDBPyConnection, record_path: str, kind: str, repository: str,
          record_key: str | None) -> StoredRecord:
    if RECORD_PATH.fullmatch(record_path) is None:
        raise ReviewStoreUnavailable("damaged: a stored record path does not match the record-path pattern")
    path = lake_path(lake, record_path)  # PathEscapeError: named project-relative, with the cure for source
    try:
        data = read_opened(path)
        record = orjson.loads(data)
        validate_record(record, path=record_path)
    except (NotRegularFile, OSError, orjson.JSONDecodeError, RecordInvalidError) as exc:
        raise ReviewStoreUnavailable(f"stale: record file unreadable ({type(exc).__name__})") from exc
    expected_key = record["recordKey"] if record_key is None else record_key
    if (record["kind"], record["repository"], record["recordKey"]) != (kind, repository, expected_key):
        raise ReviewStoreUnavailable("stale: a record file is not the record the store row promised")
    if _stored_rows(cursor, record_path) != _projected_rows(record_path, record):
        raise ReviewStoreUnavailable("stale: a record file is not the record the store row promised")
    return StoredRecord(record_path, content_hash(data), record)


def _stored_rows(cursor: duckdb.DuckDBPyConnection, record_path: str) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """The verified store's row for `record_path` (the columns its file decides) and its texts, in order."""
    found = cursor.execute(
        f"SELECT ordinal, {', '.join(_FILE_COLUMNS)} FROM s.records WHERE record_path = ?",  # noqa: S608 - constants
        [record_path],
    ).fetchall()
    if len(found) != 1:
        raise ReviewStoreUnavailable("damaged: a record path is not one row of the store")
    ordinal, *values = found[0]
    texts = cursor.execute(
        "SELECT position, channel, body FROM s.texts WHERE ordinal = ? ORDER BY position", [ordinal]
    ).fetchall()
    return dict(zip(_FILE_COLUMNS, values, strict=True)), [tuple(text) for text in texts]


def _projected_rows(record_path: str, record: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """What a build would store for this record: the same projection, so the comparison cannot drift from it."""
    projected = project(record_path, record, None)
    row = orjson.loads(b"{" + projected.record_tail)
    texts = [orjson.loads(b"{" + tail) for tail in projected.text_tails]
    return ({column: row[column] for column in _FILE_COLUMNS},
            [(text["position"], text["channel"], text["body"]) for text in texts])
