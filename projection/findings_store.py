"""The findings store: its layout, where it lives, and the one read `review.findings` serves from.

A SQLite file at `.theurian/state/theurian-findings-local.sqlite`, built by `projection.findings_build` into
a new file and swapped in whole, so a store is immutable once built. Readers open it read-only and trust
nothing in it until its build stamp verifies under this installation's secret (`theurian.stamp`).

    FindingsStoreUnavailable      the store cannot be served: absent, unstamped, foreign, stale or damaged
                                  (`reason` says which, for logs and tests; callers must show one message)

Escaping paths are not this module's error: `theurian.containment.resolve_inside` raises `PathEscapeError`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from projection.errors import FindingsStoreUnavailable
from projection.git_head import head_sha
from projection.trailers import REVIEWERS, SEVERITIES
from theurian.containment import resolve_inside
from theurian.errors import StampRejected, StoreFileFault
from theurian.installation import build_stamp_secret
from theurian.project import FINDINGS_STORE_NAME, STATE_DIR
from theurian.stamp import ROWS_NOT_STAMPED, RowDigest, check_stamp_rows, select_stamp_sql, stamp_table_sql
from theurian.stamped_store import (
    SQLITE_BUSY_SECONDS,
    SQLITE_WAL_SUFFIX,
    Identity,
    Shelf,
    VerifiedStores,
    file_identity,
    open_sqlite_read_only,
    refuse_write_ahead_log,
    remembered,
)
from theurian.stamped_store import publish_path as shared_publish_path

STORE_NAME: Final = FINDINGS_STORE_NAME
STORE_RELATIVE: Final = f"{STATE_DIR}/{STORE_NAME}"
STORE_KIND: Final = "findings"
FINDINGS_SCHEMA_VERSION: Final = 2  # 2: `built_from`, the commit the history was read from
TRAILER_FORMAT_VERSION: Final = 1
MAX_FINDING_TEXT_CHARS: Final = 2000
CUT_MARK: Final = "..."
STALE_REASON: Final = "stale: HEAD names another commit than the one it was built from"
# Every way reading a store's values can fail. A planted or damaged file can hold any SQLite type in any column
# (a REAL position, a BLOB text, text that is not UTF-8): each is a damaged store, never an internal fault.
_READ_FAULTS: Final = (sqlite3.Error, TypeError, ValueError, OverflowError)

SCHEMA: Final = """
CREATE TABLE findings (
    commit_sha TEXT NOT NULL,
    position INTEGER NOT NULL,
    reviewer TEXT NOT NULL,
    severity TEXT NOT NULL,
    finding_text TEXT NOT NULL,
    finding_folded TEXT NOT NULL,
    committed_at TEXT NOT NULL,
    pull_request INTEGER,
    family TEXT,
    specialist TEXT,
    PRIMARY KEY (commit_sha, position)
) WITHOUT ROWID;
CREATE INDEX findings_newest_first ON findings (committed_at DESC, commit_sha, position);
CREATE TABLE built_from (head_sha TEXT);
""" + stamp_table_sql("sqlite") + ";\n"
# Every column, in the order rows are digested (primary-key order), at build and at verification alike.
DIGEST_COLUMNS: Final = (
    "commit_sha, position, reviewer, severity, finding_text, finding_folded, committed_at, "
    "pull_request, family, specialist"
)
DIGEST_QUERY: Final = f"SELECT {DIGEST_COLUMNS} FROM findings ORDER BY commit_sha, position"  # noqa: S608
# The one row of `built_from`: the sha HEAD named when the build read the history (NULL outside git or before the
# first commit). Digested after the findings, so the stamp covers which commit the store answers for.
BUILT_FROM_QUERY: Final = "SELECT head_sha FROM built_from"

_SERVED_TEXT: Final = (
    f"CASE WHEN length(finding_text) > {MAX_FINDING_TEXT_CHARS} "
    f"THEN substr(finding_text, 1, {MAX_FINDING_TEXT_CHARS}) || '{CUT_MARK}' ELSE finding_text END"
)


@dataclass(frozen=True)
class FindingFilter:
    """Already-validated filters; None means "no filter on this column". `q` is already ASCII-folded."""

    reviewer: str | None = None
    severity: str | None = None
    commit_sha: str | None = None
    q_folded: str | None = None


@dataclass(frozen=True)
class StoredFinding:
    commit_sha: str
    position: int
    reviewer: str
    severity: str
    finding_text: str  # already cut at MAX_FINDING_TEXT_CHARS and marked, by the query
    committed_at: str


def store_path(root: Path) -> Path:
    """The store's path under `root`, resolved and contained (SEC-7).

    Raises:
        PathEscapeError: the path, or a link along it, resolves outside the project root.
    """
    return resolve_inside(root, STORE_RELATIVE)


def publish_path(root: Path) -> Path:
    """Where a build puts the store (`theurian.stamped_store.publish_path`: the state folder's own entry, so a
    link planted at the store's name, even one to a file inside the project, is replaced, never its target).

    Raises:
        PathEscapeError: the state folder, or the store path with every link followed, leaves the project root.
    """
    return shared_publish_path(root, STORE_NAME, store_path)


def read_findings(root: Path, where: FindingFilter, limit: int, stores: VerifiedStores | None = None, *,
                  now_ns: int | None = None) -> list[StoredFinding]:
    """Up to `limit` findings matching `where`, newest first (committedAt desc, then sha and position asc).

    The stamp is checked on every call; the rows are digested once per store file in `stores` (with none, on
    this call), and on every call while the file's times are younger than `SETTLED_NS` at `now_ns` (now when None).

    Raises:
        PathEscapeError: the store path escapes the project root.
        FindingsStoreUnavailable: the store is absent, was not built here, is stale, or is damaged.
    """
    shelf: Shelf[tuple[int, str]] = (stores or VerifiedStores()).shelf(STORE_KIND)
    path = store_path(root)
    with _verified_store(path, shelf, now_ns) as connection:
        _refuse_stale(root, connection)
        clauses, params = _where(where)
        sql = (
            f"SELECT commit_sha, position, reviewer, severity, {_SERVED_TEXT}, committed_at "  # noqa: S608
            f"FROM findings {clauses} ORDER BY committed_at DESC, commit_sha, position LIMIT ?"
        )
        try:
            rows = connection.execute(sql, (*params, limit)).fetchall()
        except _READ_FAULTS as exc:
            raise FindingsStoreUnavailable(f"unreadable: {exc}") from exc
    return [_shaped(row) for row in rows]


def _refuse_stale(root: Path, connection: sqlite3.Connection) -> None:
    # Stale is "HEAD names another commit than the one the history was read from" (docs/daemon.md), the rule doctor
    # reports by: a later commit may hold findings the store lacks, and an earlier checkout (or another branch) does
    # not hold some the store has. Times cannot tell either: a checkout of an older commit is older than the build,
    # and a commit dated in the future would have kept a fresh build refused.
    [(built,)] = connection.execute(BUILT_FROM_QUERY).fetchall()  # one row: it is stamped (`_verify`)
    if head_sha(root) != built:
        raise FindingsStoreUnavailable(STALE_REASON)


def _where(where: FindingFilter) -> tuple[str, list[str]]:
    clauses, params = [], []
    for column, value in (("reviewer", where.reviewer), ("severity", where.severity),
                          ("commit_sha", where.commit_sha)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if where.q_folded is not None:
        # instr, not LIKE: every character of q is literal, `%` and `_` included.
        clauses.append("instr(finding_folded, ?) > 0")
        params.append(where.q_folded)
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params


def _shaped(row: tuple[object, ...]) -> StoredFinding:
    sha, position, reviewer, severity, text, committed_at = row
    valid = (
        isinstance(sha, str) and isinstance(position, int) and position >= 0 and reviewer in REVIEWERS
        and severity in SEVERITIES and isinstance(text, str) and isinstance(committed_at, str)
    )
    if not valid:
        raise FindingsStoreUnavailable("a served row holds a value outside its column's vocabulary")
    return StoredFinding(
        str(sha), int(str(position)), str(reviewer), str(severity), str(text), str(committed_at)
    )


@contextmanager
def _verified_store(path: Path, shelf: Shelf[tuple[int, str]], now_ns: int | None) -> Iterator[sqlite3.Connection]:
    before = _identity(path)
    try:
        connection = open_sqlite_read_only(path, timeout=SQLITE_BUSY_SECONDS, check_same_thread=True)
    except sqlite3.Error as exc:
        raise FindingsStoreUnavailable(f"unopenable: {exc}") from exc
    with closing(connection):
        try:
            connection.execute("BEGIN")  # one read snapshot for the stamp check and the query alike
            _verify(connection, path, before, shelf, now_ns)
        except _READ_FAULTS as exc:  # RowDigest refuses a value of a type the build never writes: TypeError
            raise FindingsStoreUnavailable(f"unreadable: {type(exc).__name__}: {exc}") from exc
        yield connection


def _verify(connection: sqlite3.Connection, path: Path, before: Identity, shelf: Shelf[tuple[int, str]],
            now_ns: int | None) -> None:
    rows = connection.execute(select_stamp_sql()).fetchall()
    secret = build_stamp_secret()
    try:
        fields, _ = check_stamp_rows(
            rows, secret, store=STORE_KIND, schema_version=FINDINGS_SCHEMA_VERSION,
            format_version=TRAILER_FORMAT_VERSION, format_name="trailer format",
        )
    except StampRejected as exc:
        raise FindingsStoreUnavailable(exc.reason) from exc
    count, digest = _row_digest(connection, path, before, shelf, secret, now_ns)
    if (count, digest) != (fields.row_count, fields.row_digest):
        raise FindingsStoreUnavailable(ROWS_NOT_STAMPED)


def _row_digest(connection: sqlite3.Connection, path: Path, before: Identity, shelf: Shelf[tuple[int, str]],
                secret: bytes, now_ns: int | None) -> tuple[int, str]:
    # Digesting every row costs a full scan, so it is done once per file (`theurian.stamped_store.remembered`): a
    # built store is never modified in place (a rebuild swaps in a new inode), and any write to the file changes its
    # size or its modification and change times, once they have settled.
    def digested() -> tuple[int, str]:
        digest = RowDigest()
        count = 0
        for row in connection.execute(DIGEST_QUERY):
            digest.update(row)
            count += 1
        for row in connection.execute(BUILT_FROM_QUERY):  # one row from a build: a second one fails the digest
            digest.update(row)
        return count, digest.hexdigest()

    return remembered(shelf, str(path), before, secret, digested, still_at=path, now_ns=now_ns)


def _identity(path: Path) -> Identity:
    """The store file's identity, checked to have no write-ahead log beside it (`refuse_write_ahead_log`): taken
    before the store is opened and again before its age is read, so a log planted at either moment is refused."""
    try:
        identity = file_identity(path)
        refuse_write_ahead_log(path, SQLITE_WAL_SUFFIX)
    except StoreFileFault as exc:
        raise FindingsStoreUnavailable(exc.reason) from None
    return identity
