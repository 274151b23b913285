"""Build stamps: an HMAC that says "this installation built this store, with this build, and these rows".

A store is derived and git-ignored, yet a repository can still carry one (`git add -f`, a tarball), and
nothing about a planted file need be malformed. The stamp is what tells a store built here from one that
arrived: it is an HMAC-SHA256, keyed by the installation's secret
(`theurian.installation.build_stamp_secret()`, kept outside every repository), over named fields:

    store            which kind of store ("findings", "review", "knowledge"): a stamp cannot move between kinds
    schema_version   the store layout the build wrote; a reader refuses any version but its own (stale)
    format_version   the version of the source format the build read (trailer grammar, evidence format)
    build_id         unique per build
    row_count        how many rows the build wrote
    row_digest       `RowDigest` over every row, in an order the store defines and reproduces when verifying

The API is store-agnostic:

    digest = RowDigest(); digest.update(row) for each row (a sequence of str / int / None)
    fields = StampFields(store=..., schema_version=..., format_version=..., build_id=new_build_id(),
                         row_count=n, row_digest=digest.hexdigest())
    stamp = compute_stamp(fields, secret)        # hex, stored beside the fields
    verify_stamp(fields, stamp, secret) -> bool  # constant-time comparison

A store keeps the fields and the stamp in one row of its own table, declared, written and read only through
this module: `STAMP_TABLE` created by `stamp_table_sql(dialect)`, its row written by `INSERT_STAMP_SQL` with
`stamp_row(fields, secret)`, read back by `select_stamp_sql()` (as `STAMP_COLUMNS`). `check_stamp_rows(rows,
secret, ...)` checks the stamp and that the version fields are the reader's own, and raises `StampRejected`
otherwise. The store then checks that its rows still count and digest as stamped; the reasons a store is refused
for are the constants below (`NO_STAMP`, `ROWS_NOT_STAMPED`, `TABLES_NOT_BUILT`, `OTHER_MODEL`).
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Final

import orjson

from theurian.errors import StampRejected

_DOMAIN: Final = b"theurian-build-stamp/1\n"
_LENGTH_BYTES: Final = 8

Value = str | int | bytes | None


@dataclass(frozen=True)
class StampFields:
    """Everything a stamp covers. Two stores with equal fields and rows get equal stamps under one secret."""

    store: str
    schema_version: int
    format_version: int
    build_id: str
    row_count: int
    row_digest: str

    def canonical_bytes(self) -> bytes:
        """The exact bytes the HMAC is taken over: a domain tag, then the fields as sorted-key JSON."""
        return _DOMAIN + orjson.dumps(asdict(self), option=orjson.OPT_SORT_KEYS)


STAMP_TABLE: Final = "build_stamp"
# Each column of the stamp table: its name, its SQLite type, its DuckDB type (a count is 64-bit in both).
_DECLARED: Final = (
    ("store", "TEXT", "VARCHAR"),
    ("schema_version", "INTEGER", "INTEGER"),
    ("format_version", "INTEGER", "INTEGER"),
    ("build_id", "TEXT", "VARCHAR"),
    ("row_count", "INTEGER", "BIGINT"),
    ("row_digest", "TEXT", "VARCHAR"),
    ("stamp", "TEXT", "VARCHAR"),
)
STAMP_COLUMNS: Final = ", ".join(name for name, _, _ in _DECLARED)
# One placeholder per column, whatever the columns become.
INSERT_STAMP_SQL: Final = (
    f"INSERT INTO {STAMP_TABLE} ({STAMP_COLUMNS}) VALUES ({', '.join('?' * len(_DECLARED))})"  # noqa: S608 - ours
)

# Why a store is refused, as each store's reader words it (`StampRejected.reason` and the stores' own checks).
NO_STAMP: Final = "no build stamp"
ROWS_NOT_STAMPED: Final = "damaged: its rows are not the rows its build stamped"
TABLES_NOT_BUILT: Final = "damaged: its tables are not the tables a build creates"
OTHER_MODEL: Final = "superseded: built with another embedding model"
NO_SINGLE_STAMP: Final = "no single build stamp"
MALFORMED_STAMP: Final = "a malformed build stamp"
FOREIGN_STAMP: Final = "a stamp this installation did not make"
# Every reason that says this installation did not build the store (a copy, a plant, or a stamp torn out).
NOT_BUILT_HERE: Final = (NO_STAMP, NO_SINGLE_STAMP, MALFORMED_STAMP, FOREIGN_STAMP)
# How every reason a store is of a superseded schema or source format begins.
STALE_PREFIX: Final = "stale:"


def stamp_table_sql(dialect: str, *, per_line: int = 1, closing: str = "\n)") -> str:
    """The stamp table's CREATE TABLE statement in `dialect` ("sqlite" or "duckdb"), `per_line` columns a line.

    The layout is a parameter because SQLite keeps a CREATE statement's text verbatim and the knowledge state's
    catalog check compares that text: a state built before this statement had one owner keeps its exact text.

    Raises:
        ValueError: an unknown dialect.
    """
    if dialect not in ("sqlite", "duckdb"):
        raise ValueError(f"no stamp table for the dialect {dialect!r}")
    declared = [f"{name} {sqlite if dialect == 'sqlite' else duckdb} NOT NULL" for name, sqlite, duckdb in _DECLARED]
    lines = (", ".join(declared[start:start + per_line]) for start in range(0, len(declared), per_line))
    return f"CREATE TABLE {STAMP_TABLE} (\n    " + ",\n    ".join(lines) + closing


def select_stamp_sql(schema: str = "") -> str:
    """The query `check_stamp_rows` reads: every stamp row, as `STAMP_COLUMNS`; `schema` as "s." for an attached
    store."""
    return f"SELECT {STAMP_COLUMNS} FROM {schema}{STAMP_TABLE}"  # noqa: S608 - our own names


def stamp_row(fields: StampFields, secret: bytes) -> tuple[Value, ...]:
    """The values of the stamp table's one row, in `STAMP_COLUMNS` order."""
    return (fields.store, fields.schema_version, fields.format_version, fields.build_id, fields.row_count,
            fields.row_digest, compute_stamp(fields, secret))


def check_stamp_rows(
    rows: Sequence[Sequence[object]], secret: bytes, *, store: str, schema_version: int, format_version: int,
    format_name: str,
) -> tuple[StampFields, str]:
    """Verify the rows a store's stamp table holds (selected as `STAMP_COLUMNS`); return the fields and stamp.

    Raises:
        StampRejected: not exactly one row, a malformed row, a stamp this secret did not make, another kind of
            store, or a superseded store schema or source format.
    """
    if len(rows) != 1:
        raise StampRejected(NO_SINGLE_STAMP)
    *values, stamp = rows[0]
    try:
        fields = StampFields(*values)  # type: ignore[arg-type]
        genuine = isinstance(stamp, str) and verify_stamp(fields, stamp, secret)
    except (TypeError, ValueError) as exc:
        raise StampRejected(MALFORMED_STAMP) from exc
    if not genuine:
        raise StampRejected(FOREIGN_STAMP)
    if (fields.store, fields.schema_version) != (store, schema_version):
        raise StampRejected(f"{STALE_PREFIX} built by a superseded store schema")
    if fields.format_version != format_version:
        raise StampRejected(f"{STALE_PREFIX} built from a superseded {format_name}")
    assert isinstance(stamp, str)
    return fields, stamp


def new_build_id() -> str:
    return uuid.uuid4().hex


def compute_stamp(fields: StampFields, secret: bytes) -> str:
    """The hex HMAC-SHA256 of `fields` under `secret`."""
    return hmac.new(secret, fields.canonical_bytes(), hashlib.sha256).hexdigest()


def verify_stamp(fields: StampFields, stamp: str, secret: bytes) -> bool:
    """Whether `stamp` is the stamp of `fields` under `secret` (compared in constant time)."""
    return hmac.compare_digest(compute_stamp(fields, secret), stamp)


class RowDigest:
    """SHA-256 over rows, each value tagged with its type and length-prefixed.

    Tagging and length prefixes make the encoding injective: `("ab", "c")` and `("a", "bc")`, or `1`, `"1"` and
    `b"1"`, or `None` and `""`, never digest alike.
    """

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def update(self, row: Sequence[Value]) -> None:
        """Add one row.

        Raises:
            TypeError: a value is not a str, an int, bytes or None (a bool is refused: it is not a column type
                here; nor is a float, whose digest would depend on how it is printed).
        """
        self._hash.update(b"R" + len(row).to_bytes(_LENGTH_BYTES, "big"))
        for value in row:
            self._hash.update(_encode(value))

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def _encode(value: Value) -> bytes:
    if value is None:
        return b"N"
    if isinstance(value, bool):
        raise TypeError("a bool is not a stampable column value")
    if isinstance(value, int):
        data, tag = str(value).encode("ascii"), b"I"
    elif isinstance(value, str):
        data, tag = value.encode("utf-8"), b"S"
    elif isinstance(value, bytes):
        data, tag = value, b"B"
    else:
        raise TypeError(f"{type(value).__name__} is not a stampable column value")
    return tag + len(data).to_bytes(_LENGTH_BYTES, "big") + data
