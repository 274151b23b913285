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

A store keeps the fields and the stamp in one row of its own table (`STAMP_COLUMNS`, written from
`stamp_row(fields, secret)`); `check_stamp_rows(rows, secret, ...)` reads that table back, checks the stamp and
that the version fields are the reader's own, and raises `StampRejected` otherwise. The store then checks that
its rows still count and digest as stamped.
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

Value = str | int | None


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


STAMP_COLUMNS: Final = "store, schema_version, format_version, build_id, row_count, row_digest, stamp"


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
        raise StampRejected("no single build stamp")
    *values, stamp = rows[0]
    try:
        fields = StampFields(*values)  # type: ignore[arg-type]
        genuine = isinstance(stamp, str) and verify_stamp(fields, stamp, secret)
    except (TypeError, ValueError) as exc:
        raise StampRejected("a malformed build stamp") from exc
    if not genuine:
        raise StampRejected("a stamp this installation did not make")
    if (fields.store, fields.schema_version) != (store, schema_version):
        raise StampRejected("stale: built by a superseded store schema")
    if fields.format_version != format_version:
        raise StampRejected(f"stale: built from a superseded {format_name}")
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

    Tagging and length prefixes make the encoding injective: `("ab", "c")` and `("a", "bc")`, or `1` and
    `"1"`, or `None` and `""`, never digest alike.
    """

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def update(self, row: Sequence[Value]) -> None:
        """Add one row.

        Raises:
            TypeError: a value is not a str, an int or None (a bool is refused: it is not a column type here).
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
    else:
        raise TypeError(f"{type(value).__name__} is not a stampable column value")
    return tag + len(data).to_bytes(_LENGTH_BYTES, "big") + data
