"""The canonical state: one SQLite database per build, immutable once built, chosen by an active pointer.

`theurian migrate apply` writes a new database file and then swaps the pointer
(`.theurian/state/knowledge-active.json`) durably; a reader holding the previous file is never disturbed. The
pointer records the database's file name, its state hash and how many migration files it applied. The state
hash is a sha256 over a canonical serialisation of every canonical table (rows sorted, keys sorted, the schema
version included, the per-project key excluded), so the same migrations always give the same hash.
"""

from __future__ import annotations

import hashlib
import operator
import re
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from knowledge import CANONICAL_SCHEMA_VERSION
from knowledge.errors import STATE_REBUILD_CURE, StateBusyError, StateMissingError, StateUnreadableError
from theurian.containment import resolve_inside
from theurian.durable import write_bytes_durably
from theurian.errors import NotRegularFile, StoreFileFault
from theurian.files import read_opened, regular_status
from theurian.project import KNOWLEDGE_POINTER_NAME, KNOWLEDGE_STATE_PREFIX, STATE_DIR
from theurian.stamp import stamp_table_sql
from theurian.stamped_store import (
    SQLITE_WAL_SUFFIX,
    Identity,
    file_identity,
    open_sqlite_read_only,
    refuse_write_ahead_log,
)

POINTER_NAME: Final = KNOWLEDGE_POINTER_NAME
STATE_FILE: Final = re.compile(rf"^{KNOWLEDGE_STATE_PREFIX}[0-9A-HJKMNP-TV-Z]{{26}}\.sqlite$")
# A reader waits this long for a lock; nothing writes a built state, so only a foreign process can hold one.
READ_BUSY_SECONDS: Final = 10.0
# A pointer is a few hundred bytes; anything far larger is not one this build wrote.
MAX_POINTER_BYTES: Final = 64 * 1024

SCHEMA: Final = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE migration_history (
    project_id TEXT NOT NULL, position INTEGER NOT NULL, migration_id TEXT NOT NULL, file_name TEXT NOT NULL,
    checksum TEXT NOT NULL, created_at TEXT NOT NULL, author TEXT NOT NULL,
    PRIMARY KEY (project_id, migration_id));
CREATE TABLE knowledge_items (
    project_id TEXT NOT NULL, item_id TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT NOT NULL,
    owner TEXT NOT NULL, status TEXT NOT NULL, trust_level TEXT NOT NULL, sensitivity TEXT NOT NULL,
    valid_from TEXT, valid_to TEXT, valid_from_utc TEXT, valid_to_utc TEXT,
    labels TEXT NOT NULL, scope_paths TEXT NOT NULL, current_revision_id TEXT,
    status_reason TEXT, superseded_by TEXT, PRIMARY KEY (project_id, item_id));
CREATE TABLE revisions (
    project_id TEXT NOT NULL, revision_id TEXT NOT NULL, item_id TEXT NOT NULL, title TEXT NOT NULL,
    body TEXT NOT NULL, content_type TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL,
    content_file TEXT NOT NULL, content_sha256 TEXT NOT NULL, source_anchors TEXT NOT NULL,
    originates_in_theurian INTEGER NOT NULL, migration_id TEXT NOT NULL,
    PRIMARY KEY (project_id, revision_id));
CREATE TABLE relations (
    project_id TEXT NOT NULL, source_item_id TEXT NOT NULL, relation_type TEXT NOT NULL,
    target_item_id TEXT NOT NULL, note TEXT,
    PRIMARY KEY (project_id, source_item_id, relation_type, target_item_id));
CREATE TABLE aliases (project_id TEXT NOT NULL, alias TEXT NOT NULL, item_id TEXT NOT NULL,
    PRIMARY KEY (project_id, alias));
CREATE TABLE evidence (
    project_id TEXT NOT NULL, item_id TEXT NOT NULL, source_uri TEXT NOT NULL, anchor TEXT NOT NULL,
    description TEXT NOT NULL, confidence REAL NOT NULL, PRIMARY KEY (project_id, item_id, source_uri));
CREATE TABLE specifications (
    project_id TEXT NOT NULL, spec_id TEXT NOT NULL, item_id TEXT NOT NULL, source_uri TEXT NOT NULL,
    format TEXT NOT NULL, status TEXT NOT NULL, superseded_by TEXT, PRIMARY KEY (project_id, spec_id));
CREATE TABLE project_integrity (project_id TEXT PRIMARY KEY, expected_surfaceable_count INTEGER NOT NULL);
""" + stamp_table_sql("sqlite", per_line=4, closing=")") + ";\n"  # the text every state so far was built with
# Every table whose rows are canonical state; project_integrity is a derived record, meta describes the file, and
# build_stamp says which installation built it and which rows it holds (`knowledge.state_stamp`).
HASHED_TABLES: Final = (
    "migration_history",
    "knowledge_items",
    "revisions",
    "relations",
    "aliases",
    "evidence",
    "specifications",
)


@dataclass(frozen=True)
class Pointer:
    state_file: str
    state_hash: str
    migration_count: int
    schema_version: int


def state_folder(root: Path) -> Path:
    return resolve_inside(root, STATE_DIR)


def create_database(path: Path, project_key: str) -> sqlite3.Connection:
    """A new, empty state database at `path` (which must not exist), in one open transaction, the schema included.

    The file is written without SQLite's own syncs: the caller fsyncs it once it is committed, before anything
    names it (`theurian.durable.fsync_file`).
    """
    connection = sqlite3.connect(path, isolation_level=None)
    # Nobody reads a build until the pointer names it and a failed build is unlinked, so the rollback journal can
    # stay in memory (a failed statement still rolls back) and each commit need not sync: one fsync at the end
    # makes the finished file durable. Creating the tables inside the build's transaction spares a commit each.
    connection.execute("PRAGMA journal_mode = MEMORY")
    connection.execute("PRAGMA synchronous = OFF")
    # The replay looks every item up by key: with SQLite's default 2 MB page cache the lookups went to the OS once
    # the file outgrew it (the replay took 4.2 x as long for 3 x the items at 30,000); pages are taken only as
    # the file grows, so this bounds the cache at 256 MB rather than reserving it.
    connection.execute("PRAGMA cache_size = -262144")
    connection.executescript("BEGIN IMMEDIATE;" + SCHEMA)
    connection.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [("schema_version", str(CANONICAL_SCHEMA_VERSION)), ("project_key", project_key)],
    )
    return connection


StoredRows = tuple[list[str], list[tuple[Any, ...]]]


def stored_rows(connection: sqlite3.Connection, table: str) -> StoredRows:
    """`table`'s column names and its rows in primary-key order, each value beside its SQLite storage class
    (`(typeof(a), a, typeof(b), b, ...)`): what both the state hash and the build stamp's digest are made of, so a
    build reads each table once for the two."""
    info = connection.execute(f"PRAGMA table_info({table})").fetchall()
    columns = [str(row[1]) for row in info]
    selected = ", ".join(f"typeof({c}), {c}" for c in columns)
    # Primary-key order: one order for a healthy file (its keys are unique), read off the key's index.
    order = ", ".join(str(row[1]) for row in sorted((row for row in info if row[5]), key=lambda row: row[5]))
    cursor = connection.cursor()
    cursor.row_factory = None  # plain tuples, whatever the connection's (a build's replay reads sqlite3.Row)
    return columns, cursor.execute(f"SELECT {selected} FROM {table} ORDER BY {order}").fetchall()  # noqa: S608


def state_hash(connection: sqlite3.Connection, read: Mapping[str, StoredRows] | None = None) -> str:
    """sha256 over the canonical serialisation of every hashed table, schema version included: per table its sorted
    column names (the project key's excluded) and row count, then each row as a JSON object with sorted keys, the
    rows in the order of those bytes, each followed by a newline. `read` holds tables already read by
    `stored_rows` from this connection (the others are read here)."""
    digest = hashlib.sha256()
    digest.update(orjson.dumps({"schemaVersion": CANONICAL_SCHEMA_VERSION}))
    for table in HASHED_TABLES:
        all_columns, rows = read[table] if read and table in read else stored_rows(connection, table)
        columns = sorted(c for c in all_columns if c != "project_id")
        values = operator.itemgetter(*(2 * all_columns.index(c) + 1 for c in columns))
        # Keys already in sorted order, so each object is written as OPT_SORT_KEYS would write it.
        lines = sorted(orjson.dumps(dict(zip(columns, values(row), strict=True))) for row in rows)
        digest.update(orjson.dumps({"table": table, "columns": columns, "rows": len(lines)}))
        digest.update(b"\n".join(lines))
        if lines:
            digest.update(b"\n")
    return digest.hexdigest()


def read_pointer(root: Path) -> Pointer | None:
    """The active pointer, or None when no state was ever built.

    Raises:
        StateUnreadableError: the pointer exists but is not one this build wrote.
    """
    path = resolve_inside(root, f"{STATE_DIR}/{POINTER_NAME}")
    try:
        document = orjson.loads(read_small_file(path))
    except FileNotFoundError:
        return None
    except (NotRegularFile, OSError, orjson.JSONDecodeError) as exc:
        raise StateUnreadableError(f"the knowledge state pointer is damaged; {STATE_REBUILD_CURE}") from exc
    try:
        pointer = Pointer(
            str(document["stateFile"]),
            str(document["stateHash"]),
            int(document["migrationCount"]),
            int(document["schemaVersion"]),
        )
        if pointer.migration_count < 0:
            raise ValueError("a negative migration count")
    except (KeyError, TypeError, ValueError) as exc:
        raise StateUnreadableError(f"the knowledge state pointer is damaged; {STATE_REBUILD_CURE}") from exc
    if not STATE_FILE.match(pointer.state_file) or pointer.schema_version != CANONICAL_SCHEMA_VERSION:
        raise StateUnreadableError(
            "the knowledge state was built by another schema version or names no state file; "
            + STATE_REBUILD_CURE
        )
    return pointer


def read_small_file(path: Path) -> bytes:
    """A derived-state file of at most MAX_POINTER_BYTES, read without waiting on what is not a regular file (a
    FIFO planted in `.theurian/state` would otherwise park a daemon thread for good).

    Raises:
        FileNotFoundError: nothing is there.
        NotRegularFile: not a regular file, or larger than the bound.
        OSError: the file system refused the read.
    """
    return read_opened(path, MAX_POINTER_BYTES)  # the kernel's one reader (theurian.files)


def is_regular_file(path: Path) -> bool:
    """Whether `path` (already resolved) is a regular file: what may be handed to SQLite to open."""
    try:
        regular_status(path)
    except (NotRegularFile, OSError):
        return False
    return True


def write_pointer(root: Path, pointer: Pointer) -> None:
    document = {
        "stateFile": pointer.state_file,
        "stateHash": pointer.state_hash,
        "migrationCount": pointer.migration_count,
        "schemaVersion": pointer.schema_version,
    }
    write_bytes_durably(state_folder(root) / POINTER_NAME, orjson.dumps(document, option=orjson.OPT_INDENT_2))


# What a state file SQLite cannot read (or cannot be trusted to read as built) is answered with: a rebuild cures it.
STATE_UNREADABLE: Final = f"the knowledge state database cannot be read; {STATE_REBUILD_CURE}"


def open_read_only(root: Path, pointer: Pointer) -> sqlite3.Connection:
    """The database the pointer names, opened read-only (never created), schema version checked.

    Raises:
        StateUnreadableError: the file is missing, not SQLite, has a write-ahead log beside it, or is not this
            build's schema.
    """
    path = resolve_inside(root, f"{STATE_DIR}/{pointer.state_file}")
    if not is_regular_file(path):  # SQLite would wait forever opening a FIFO, and hold a daemon thread with it
        raise StateUnreadableError(STATE_UNREADABLE)
    try:
        # No build leaves one (builds keep their journal in memory), and SQLite reads its rows as the file's own
        # without changing the file's identity, which the verify-once cache remembers a verdict under.
        refuse_write_ahead_log(path, SQLITE_WAL_SUFFIX)
    except StoreFileFault:
        raise StateUnreadableError(STATE_UNREADABLE) from None
    try:
        connection = open_sqlite_read_only(path, timeout=READ_BUSY_SECONDS, check_same_thread=False)
        version = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise state_read_failure(exc) from exc
    if version is None or version[0] != str(CANONICAL_SCHEMA_VERSION):
        connection.close()
        raise StateUnreadableError(f"the knowledge state database is not this build's; {STATE_REBUILD_CURE}")
    return connection


def state_file_identity(root: Path, pointer: Pointer) -> tuple[Path, Identity | None]:
    """The path of the database the pointer names and its file identity (`theurian.stamped_store`), the identity
    None when it cannot be taken (the open then refuses)."""
    path = resolve_inside(root, f"{STATE_DIR}/{pointer.state_file}")
    try:
        return path, file_identity(path)
    except StoreFileFault:
        return path, None


def state_read_failure(exc: sqlite3.DatabaseError) -> StateUnreadableError:
    """What a read of the state that SQLite refused means: busy (another process holds a lock on the file, for longer
    than READ_BUSY_SECONDS), which a retry mends, or unreadable, which only a rebuild does. Telling a caller of a
    busy state to delete it would destroy a healthy one."""
    if isinstance(exc, sqlite3.OperationalError) and exc.sqlite_errorcode in (sqlite3.SQLITE_BUSY,
                                                                               sqlite3.SQLITE_LOCKED):
        return StateBusyError(
            "the knowledge state is locked by another process (nothing is wrong with it); try again in a moment"
        )
    return StateUnreadableError(STATE_UNREADABLE)


def project_key(connection: sqlite3.Connection) -> str:
    row = connection.execute("SELECT value FROM meta WHERE key = 'project_key'").fetchone()
    if row is None:
        raise StateUnreadableError(
            f"the knowledge state database has lost its meta record; {STATE_REBUILD_CURE}"
        )
    return str(row[0])


def require_pointer(root: Path, project_id: str) -> Pointer:
    """The active pointer, or a refusal naming `theurian migrate apply`.

    Raises:
        StateMissingError: no state has been built for this project.
    """
    pointer = read_pointer(root)
    if pointer is None:
        raise StateMissingError(
            f"project {project_id!r} has no built knowledge state; run `theurian migrate apply` in its folder"
        )
    return pointer


def rows_as_dicts(cursor: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor]
