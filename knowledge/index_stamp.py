"""The retrieval index's build stamp: which installation built an index file, over which state, with which rows.

`theurian index build` stamps every index it builds (`theurian.stamp`: an HMAC under this installation's secret)
over its build id, the index schema, the canonical state schema it read and a digest of the whole file as SQLite
serves it: the catalog (every table, index and virtual table as declared, with its root page) and then every row
of every table but the stamp's own, the FTS5 tables' shadow tables included (their content, term segments and
document sizes: what the `lexical`, `title` and `trigram` queries match against), the word postings, the dense
vectors and the summary tree. `meta`, which names the state hash, the disclosure ceiling, the channels, the
embedding model and the channel digests, is one of those tables, so the unkeyed digests the pointer repeats are
vouched for by the stamp too, and `check_pointer` holds the pointer to them.

A reader checks once per index file (`verified`): the stamp (present, this installation's, an index of this
schema), then the digest. Anyone who can write `.theurian/state/` can rewrite an index and recompute every sha256
in it and in the pointer; nobody without the installation's secret can recompute the stamp.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from knowledge import CANONICAL_SCHEMA_VERSION
from knowledge.errors import IndexDamagedError
from theurian.errors import StampRejected
from theurian.installation import build_stamp_secret
from theurian.stamp import (
    INSERT_STAMP_SQL,
    NO_STAMP,
    ROWS_NOT_STAMPED,
    STAMP_TABLE,
    RowDigest,
    StampFields,
    check_stamp_rows,
    select_stamp_sql,
    stamp_row,
    stamp_table_sql,
)
from theurian.stamped_store import Identity, VerifiedStores, remembered

STORE_KIND: Final = "knowledge-index"
# 2: the word postings, the trigram vocabulary, the dense vectors and the summary tree, and the channels the build
# offers in the pointer and `meta`; 3: the build stamp, and every channel digest in `meta`. A pointer of an earlier
# version is superseded (`index status` says so; a search falls back with `index-unreadable`).
INDEX_SCHEMA_VERSION: Final = 3
# The canonical state schema the index was built from (the stamp's source format).
STATE_FORMAT_NAME: Final = "knowledge state schema"
NOT_THE_NAMED_BUILD: Final = "damaged: not the build its pointer names"
FOREIGN_VALUE: Final = "damaged: it holds a value no build writes"


def stamp_index(index: sqlite3.Connection, build_id: str, secret: bytes) -> None:
    """Create the stamp table and stamp the index in `index` (every other row committed: FTS5 writes its segments
    only at a commit), inside a transaction of its own."""
    index.execute("BEGIN")
    index.execute(stamp_table_sql("sqlite"))
    count, digest = index_digest(index)
    fields = StampFields(STORE_KIND, INDEX_SCHEMA_VERSION, CANONICAL_SCHEMA_VERSION, build_id, count, digest)
    index.execute(INSERT_STAMP_SQL, stamp_row(fields, secret))
    index.execute("COMMIT")


def index_digest(index: sqlite3.Connection) -> tuple[int, str]:
    """(rows, digest) over the catalog, then every table's rows (the stamp table's excepted), each table's rows in
    the order of all its columns, tables by name.

    Raises:
        TypeError: a value no build writes (a REAL): a float's digest would depend on how it is printed.
    """
    digest = RowDigest()
    catalog = index.execute(
        "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY type, name"
    ).fetchall()
    for entry in catalog:
        digest.update(entry)
    total = len(catalog)
    for table in sorted(str(name) for kind, name, _, _, sql in catalog if kind == "table" and name != STAMP_TABLE
                        and not str(sql or "").upper().startswith("CREATE VIRTUAL TABLE")):
        quoted = '"' + table.replace('"', '""') + '"'
        width = len(index.execute(f"SELECT * FROM {quoted} LIMIT 0").description)  # noqa: S608 - a catalog name
        order = ", ".join(str(n) for n in range(1, width + 1))
        rows = index.execute(f"SELECT * FROM {quoted} ORDER BY {order}").fetchall()  # noqa: S608 - a catalog name
        digest.update((table, len(rows)))
        for row in rows:
            digest.update(row)
        total += len(rows)
    return total, digest.hexdigest()


def check_index(index: sqlite3.Connection, secret: bytes) -> StampFields:
    """The index's stamp fields, once its stamp is this installation's for an index of this schema and its catalog
    and rows digest as stamped.

    Raises:
        IndexDamagedError: the reason the index is refused (`theurian.stamp`'s reasons, or `FOREIGN_VALUE`).
        sqlite3.DatabaseError: SQLite could not read the file.
    """
    tables = {row[0] for row in index.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if STAMP_TABLE not in tables:
        raise IndexDamagedError(NO_STAMP)
    try:
        fields, _ = check_stamp_rows(index.execute(select_stamp_sql()).fetchall(), secret, store=STORE_KIND,
                                     schema_version=INDEX_SCHEMA_VERSION, format_version=CANONICAL_SCHEMA_VERSION,
                                     format_name=STATE_FORMAT_NAME)
    except StampRejected as exc:
        raise IndexDamagedError(exc.reason) from exc
    try:
        counted = index_digest(index)
    except TypeError as exc:
        raise IndexDamagedError(FOREIGN_VALUE) from exc
    if counted != (fields.row_count, fields.row_digest):
        raise IndexDamagedError(ROWS_NOT_STAMPED)
    return fields


def check_pointer(meta: Mapping[str, str], expected: Mapping[str, str | None]) -> None:
    """Every fact the pointer states about the build is what the build's own (stamped) `meta` says.

    Raises:
        IndexDamagedError: NOT_THE_NAMED_BUILD.
    """
    if any(meta.get(key) != value for key, value in expected.items()):
        raise IndexDamagedError(NOT_THE_NAMED_BUILD)


def verified(stores: VerifiedStores | None, path: Path, before: Identity, index: sqlite3.Connection,
             now_ns: int | None = None) -> str:
    """The index's stamped build id, once `check_index` passes; remembered in `stores` per file identity (taken
    before it was opened, and checked again after, so a file swapped in between is verified afresh next time) and
    secret. A file changed within SETTLED_NS (at `now_ns`, now when None) is verified on every call, as the
    knowledge state is: its times do not yet name one content. Every call verifies in full when `stores` is None.

    Raises:
        IndexDamagedError, sqlite3.DatabaseError: as `check_index` (a refusal is remembered too).
    """
    secret = build_stamp_secret()
    shelf = (stores or VerifiedStores()).shelf(STORE_KIND)
    return remembered(shelf, str(path), before, secret, lambda: check_index(index, secret).build_id,
                      refusals=(IndexDamagedError,), still_at=path, now_ns=now_ns)
