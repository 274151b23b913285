"""What a reader checks of an attached review store before it trusts a row: its build stamp, its catalog, its
rows' digest and the model its vectors were made with (`projection.review_store` attaches it and keeps what
verifies in the verify-once cache).

The stamp must verify under this installation's secret and name this build's store kind, schema and evidence
versions; the catalog must hold exactly the tables a build creates and no other object; the rows must digest as
stamped, a full read skipped when this installation's verification record vouches for the very file
(`projection.review_digest`); and the stored model must be the one this installation embeds with.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Final

import duckdb

from projection.errors import ReviewStoreUnavailable
from projection.review_digest import digest_tables, remember_verified, was_verified
from projection.review_layout import (
    DIGEST_TABLES,
    EVIDENCE_FORMAT_VERSION,
    MODEL_COLUMNS,
    REVIEW_SCHEMA_VERSION,
    SCHEMA,
    STORE_KIND,
)
from theurian.embedding import ModelIdentity, model_identity
from theurian.errors import ConfigError, StampRejected
from theurian.stamp import (
    NO_STAMP,
    OTHER_MODEL,
    ROWS_NOT_STAMPED,
    STAMP_TABLE,
    TABLES_NOT_BUILT,
    check_stamp_rows,
    select_stamp_sql,
)


def verify_attached(
    connection: duckdb.DuckDBPyConnection, secret: bytes, path: Path, identity: tuple[int, ...]
) -> None:
    """Return only when the store attached as `s` on `connection` (the file at `path`, of `identity`) is one this
    installation built, under `secret`, with this installation's embedding model.

    Raises:
        ReviewStoreUnavailable: why it is not (`reason`); DuckDB's and the row rendering's own errors
            (`review_store.READ_FAULTS`) pass through for the caller to report as unreadable.
    """
    tables = {row[0] for row in connection.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 's'"
    ).fetchall()}
    if STAMP_TABLE not in tables:
        raise ReviewStoreUnavailable(NO_STAMP)
    rows = connection.execute(select_stamp_sql("s.")).fetchall()
    try:
        fields, stamp = check_stamp_rows(rows, secret, store=STORE_KIND, schema_version=REVIEW_SCHEMA_VERSION,
                                         format_version=EVIDENCE_FORMAT_VERSION, format_name="evidence format")
    except StampRejected as exc:
        raise ReviewStoreUnavailable(exc.reason) from exc
    _check_catalog(connection)
    if not was_verified(path, identity, fields.build_id, stamp, secret):
        if rows_digest(connection, "s.") != (fields.row_count, fields.row_digest):
            raise ReviewStoreUnavailable(ROWS_NOT_STAMPED)
        remember_verified(path, identity, fields.build_id, stamp, secret)
    try:
        model = model_identity()
    except ConfigError as exc:
        raise ReviewStoreUnavailable(f"the embedding model cannot be loaded: {exc.message}") from exc
    if stored_model(connection, "s.") != model:
        # Its vectors are another model's: a situation embedded by this one would be compared in another space.
        raise ReviewStoreUnavailable(OTHER_MODEL)


def stored_model(connection: duckdb.DuckDBPyConnection, schema: str = "") -> ModelIdentity | None:
    """The identity of the model a store's vectors were made with; None when its one row is not there."""
    rows = connection.execute(f"SELECT {', '.join(MODEL_COLUMNS)} FROM {schema}embedding_model").fetchall()  # noqa: S608
    if len(rows) != 1:
        return None
    name, dimension, weights = rows[0]
    if not (isinstance(name, str) and isinstance(dimension, int) and isinstance(weights, str)):
        return None
    return ModelIdentity(name, dimension, weights)


# What a build's store holds besides its tables: nothing. A view in a table's place could show the digest its real
# rows and every other query planted ones; a collation on a column changes what comparing it means.
_FOREIGN_OBJECTS: Final = (
    "SELECT count(*) FROM duckdb_views() WHERE database_name = 's' AND NOT internal",
    "SELECT count(*) FROM duckdb_functions() WHERE database_name = 's'",
    "SELECT count(*) FROM duckdb_sequences() WHERE database_name = 's'",
    "SELECT count(*) FROM duckdb_indexes() WHERE database_name = 's'",
    "SELECT count(*) FROM duckdb_types() WHERE database_name = 's' AND NOT internal",
    "SELECT count(*) FROM duckdb_schemas() WHERE database_name = 's' AND schema_name <> 'main'",
)


@cache
def _built_tables() -> frozenset[tuple[str, str, str]]:
    """(schema, table, DDL) of every table a build creates, as DuckDB renders them (collations and all)."""
    with duckdb.connect(":memory:") as connection:
        connection.execute("ATTACH ':memory:' AS s")
        connection.execute("USE s")
        connection.execute(SCHEMA)
        return _tables(connection)


def _tables(connection: duckdb.DuckDBPyConnection) -> frozenset[tuple[str, str, str]]:
    rows = connection.execute(
        "SELECT schema_name, table_name, sql FROM duckdb_tables() WHERE database_name = 's'"
    ).fetchall()
    return frozenset((str(schema), str(table), str(sql)) for schema, table, sql in rows)


def _check_catalog(connection: duckdb.DuckDBPyConnection) -> None:
    """The attached store holds exactly the base tables a build creates, declared as it declares them, and no
    other object.

    Raises:
        ReviewStoreUnavailable: a table is missing, added, redeclared (a type, a collation, a constraint) or
            replaced by a view, or the store holds a view, macro, sequence, index, type or schema of its own.
    """
    if _tables(connection) != _built_tables():
        raise ReviewStoreUnavailable(TABLES_NOT_BUILT)
    for query in _FOREIGN_OBJECTS:
        row = connection.execute(query).fetchone()
        if row is None or row[0] != 0:
            raise ReviewStoreUnavailable("damaged: it holds objects no build creates")


def rows_digest(connection: duckdb.DuckDBPyConnection, schema: str = "") -> tuple[int, str]:
    """(record count, digest over every row of every table) as the stamp covers them, read back in full.

    Raises:
        ReviewStoreUnavailable: the count returned nothing.
    """
    row = connection.execute(f"SELECT count(*) FROM {schema}records").fetchone()  # noqa: S608 - our own name
    if row is None:
        raise ReviewStoreUnavailable("unreadable: a count returned nothing")
    return int(row[0]), digest_tables(connection, DIGEST_TABLES, schema)
