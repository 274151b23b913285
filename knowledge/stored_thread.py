"""A review thread as this installation stored it: looked up in the verified review store, read from the lake.

The store is opened through `projection.review_store.open_store`, the path review.search takes, so a store this
installation did not build (or a stale or damaged one) is never believed. The store's `record_path` then names
the lake files; each path is checked against the record-path pattern before it names a file and resolved through
`resolve_inside`, and each file is validated against its evidence schema and must be the record the store row
promised (kind, repository, key) — so the gate is recomputed from the records themselves, with their hashes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import duckdb
import orjson

from evidence.errors import RecordInvalidError
from evidence.records import FILE_NAME_PATTERN, KIND_PULL_REQUEST, KIND_REVIEW_THREAD, content_hash
from evidence.validation import validate_record
from knowledge.errors import KnowledgeError
from projection.review_store import ReviewStoreUnavailable, open_store
from theurian.containment import resolve_inside
from theurian.errors import TheurianError
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
    except duckdb.Error as exc:
        raise ReviewStoreUnavailable(f"unreadable: {type(exc).__name__}") from exc
    finally:
        cursor.close()
    thread = _read(root, str(thread_path), KIND_REVIEW_THREAD, repository, record_key)
    pull_request = None
    if pulls:
        pull_request = _read(root, str(pulls[0][0]), KIND_PULL_REQUEST, repository, None)
        if pull_request.record["pullRequest"] != thread.record["pullRequest"]:
            raise ReviewStoreUnavailable("stale: a record file is not the record the store row promised")
    return StoredThread(thread, pull_request)


def _read(root: Path, record_path: str, kind: str, repository: str, record_key: str | None) -> StoredRecord:
    if RECORD_PATH.fullmatch(record_path) is None:
        raise ReviewStoreUnavailable("damaged: a stored record path does not match the record-path pattern")
    try:
        data = resolve_inside(root, f"{REVIEW_DIR}/{record_path}").read_bytes()
        record = orjson.loads(data)
        validate_record(record if isinstance(record, dict) else {}, path=record_path)
    except (OSError, orjson.JSONDecodeError, RecordInvalidError) as exc:
        raise ReviewStoreUnavailable(f"stale: record file unreadable ({type(exc).__name__})") from exc
    except TheurianError as exc:  # a record path that resolves outside the project: never read through it
        raise ReviewStoreUnavailable(f"unreadable: {type(exc).__name__}") from exc
    expected_key = record["recordKey"] if record_key is None else record_key
    if (record["kind"], record["repository"], record["recordKey"]) != (kind, repository, expected_key):
        raise ReviewStoreUnavailable("stale: a record file is not the record the store row promised")
    return StoredRecord(record_path, content_hash(data), record)
