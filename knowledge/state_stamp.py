"""The knowledge state's build stamp: which installation built a state file, and which rows it holds.

`migrate apply` stamps every state it builds (`theurian.stamp`: an HMAC under this installation's secret) over a
digest of every row of every table, project key, integrity record and recorded state hash included, each value
digested beside its SQLite storage class. A reader checks, once per state file (`theurian.stamped_store`):

    1. the stamp: present, made by this installation, for a knowledge state of this schema and migration format;
    2. the catalog: exactly the tables and indexes a build creates, declared as it declares them;
    3. the counts behind the contract's present-only `integrity` key (`knowledge.integrity`): a difference is
       answered as the contract says, with the key, so the key and the counts keep their meaning;
    4. when the counts agree, the rows against the stamp's digest: an edit the counts cannot see (a revision body,
       an item id) is refused, never served.

Any failure of 1, 2 or 4 raises `StateNotAsBuiltError`, which the tools answer with one constant refusal naming
the integrity cure (`migrate apply` rebuilds such a state, since it no longer trusts its recorded history).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path
from typing import Final

import orjson

from knowledge import CANONICAL_SCHEMA_VERSION
from knowledge.errors import INTEGRITY_REMEDY, StateNotAsBuiltError
from knowledge.integrity import damage_detected
from knowledge.state import SCHEMA, StoredRows, stored_rows
from theurian.errors import StampRejected
from theurian.installation import build_stamp_secret
from theurian.stamp import (
    INSERT_STAMP_SQL,
    NO_STAMP,
    ROWS_NOT_STAMPED,
    STAMP_TABLE,
    TABLES_NOT_BUILT,
    RowDigest,
    StampFields,
    check_stamp_rows,
    new_build_id,
    select_stamp_sql,
    stamp_row,
)
from theurian.stamped_store import Identity, VerifiedStores, remembered

STORE_KIND: Final = "knowledge"
# The migration document format the state was replayed from (schemas/knowledge/: version 1).
MIGRATION_FORMAT_VERSION: Final = 1
# Every table the stamp covers, in digest order: all of SCHEMA's (the stamp's own table is the stamp).
DIGESTED_TABLES: Final = (
    "meta", "migration_history", "knowledge_items", "revisions", "relations", "aliases", "evidence",
    "specifications", "project_integrity",
)
_NOT_AS_BUILT: Final = "the knowledge state is not the one `theurian migrate apply` built here ({reason}). "


def _refused(reason: str) -> StateNotAsBuiltError:
    return StateNotAsBuiltError(reason, _NOT_AS_BUILT.format(reason=reason) + INTEGRITY_REMEDY)


def stamp_state(connection: sqlite3.Connection, secret: bytes, read: Mapping[str, StoredRows] | None = None) -> None:
    """Stamp the state being built in `connection` (inside its open transaction, every other row written); `read`
    as `state_digest`'s."""
    count, digest = state_digest(connection, read)
    fields = StampFields(STORE_KIND, CANONICAL_SCHEMA_VERSION, MIGRATION_FORMAT_VERSION, new_build_id(), count, digest)
    connection.execute(INSERT_STAMP_SQL, stamp_row(fields, secret))


def state_digest(connection: sqlite3.Connection, read: Mapping[str, StoredRows] | None = None) -> tuple[int, str]:
    """(rows, digest) over every digested table: per table its name, row count and the SHA-256 of its rows as one
    JSON array (each value beside its storage class, so `1`, `1.0` and `'1'` differ and a REAL is its shortest
    exact form), rows in primary-key order (`knowledge.state.stored_rows`). `read` holds tables the caller already
    read from this connection and has not written since (a build's, read for its state hash).

    Raises:
        TypeError: a value JSON cannot hold exactly (a BLOB, a REAL that is not finite): no build writes one.
    """
    total, outer = 0, RowDigest()
    for table in DIGESTED_TABLES:
        _, rows = read[table] if read and table in read else stored_rows(connection, table)
        data = orjson.dumps(rows)
        # JSON has no infinity: orjson writes a non-finite REAL as null, which its storage class right before it
        # gives away (a NULL's class is 'null', and a text holding quotes is escaped). No build writes one.
        if b'"real",null' in data:
            raise TypeError("a REAL that is not finite")
        outer.update((table, len(rows), hashlib.sha256(data).hexdigest()))
        total += len(rows)
    return total, outer.hexdigest()


def check_state(connection: sqlite3.Connection, key: str, migration_count: int, secret: bytes) -> bool:
    """Whether the counts detected damage (the `integrity` key), once the stamp and catalog are this build's and,
    when the counts agree, the rows are the rows stamped.

    Raises:
        StateNotAsBuiltError: the stamp, the catalog or the rows are not what this installation built.
        sqlite3.DatabaseError: SQLite could not read the file.
    """
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if STAMP_TABLE not in tables:
        raise _refused(NO_STAMP)
    rows = connection.execute(select_stamp_sql()).fetchall()
    try:
        fields, _ = check_stamp_rows(rows, secret, store=STORE_KIND, schema_version=CANONICAL_SCHEMA_VERSION,
                                     format_version=MIGRATION_FORMAT_VERSION, format_name="migration format")
    except StampRejected as exc:
        raise _refused(exc.reason) from exc
    if _catalog(connection) != _built_catalog():
        raise _refused(TABLES_NOT_BUILT)
    if damage_detected(connection, key, migration_count):
        return True
    try:
        counted = state_digest(connection)
    except TypeError as exc:  # orjson.JSONEncodeError is one
        raise _refused("damaged: it holds a value no build writes") from exc
    if counted != (fields.row_count, fields.row_digest):
        raise _refused(ROWS_NOT_STAMPED)
    return False


def verified_damage(stores: VerifiedStores | None, path: Path, identity: Identity | None,
                    connection: sqlite3.Connection, key: str, migration_count: int,
                    now_ns: int | None = None) -> bool:
    """`check_state`, remembered in `stores` per state file (its identity taken before it was opened, so a change
    after that moment is seen by the next call) and per pointer count; a file changed within SETTLED_NS is checked
    on every call, and so is every file when `stores` is None or its identity could not be taken.

    Raises:
        StateNotAsBuiltError, sqlite3.DatabaseError: as `check_state` (a refusal is remembered too).
    """
    secret = build_stamp_secret()
    shelf = (stores or VerifiedStores()).shelf(STORE_KIND)
    return remembered(shelf, f"{path}\0{key}\0{migration_count}", identity, secret,
                      lambda: check_state(connection, key, migration_count, secret),
                      refusals=(StateNotAsBuiltError,), now_ns=now_ns)


def _catalog(connection: sqlite3.Connection) -> frozenset[tuple[str, str, str, str | None]]:
    rows = connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return frozenset((str(t), str(n), str(b), None if s is None else str(s)) for t, n, b, s in rows)


def _built_catalog() -> frozenset[tuple[str, str, str, str | None]]:
    """What a build declares, as SQLite records it (computed here, once per verification of a file)."""
    with closing(sqlite3.connect(":memory:")) as connection:
        connection.executescript(SCHEMA)
        return _catalog(connection)
