"""What the review store's stamp digests, and how a reader skips re-digesting a store it has already trusted.

The rows digest. Every row of every table is rendered as one orjson line of `{column: value}` in the table's
column order, the lines hashed table by table in the store's own order. The build hashes the very lines it
bulk-loads, so the digest costs one SHA-256 pass over bytes already in hand; a reader that must verify renders
the rows it reads back the same way (DuckDB hands back the same str / int / None the build wrote, so the bytes
are identical). JSON lines hold no raw newline, so the concatenation is injective.

The verification record. Re-digesting a 100,000-record store costs seconds, and a store is immutable once
built, so the build leaves a record in this installation's own state folder, HMAC'd under the installation
secret, binding the store's path to the file it wrote: its (device, inode, size, mtime, ctime) identity, its
build id, its stamp, and the absence of a write-ahead log beside it (DuckDB replays a WAL on every attach, so a
WAL dropped beside a vouched-for file would change the rows served without touching the file). A reader whose
store matches a genuine record skips the digest; any other store — one
copied in, tampered with (a rewrite changes the inode or ctime, and ctime cannot be set back by an
unprivileged process), or built before the record existed — is digested in full before it is trusted. The
record lives outside every project, so a clone cannot carry one.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

import duckdb
import orjson

from theurian.errors import StoreFileFault
from theurian.installation import state_dir
from theurian.stamped_store import DUCKDB_WAL_SUFFIX, refuse_write_ahead_log

VERIFIED_DIR: Final = "review-verified"
_DOMAIN: Final = b"theurian-review-verified/2\n"  # /2: a record also vouches that no WAL lies beside the file


class LineDigest:
    """SHA-256 over the tables' lines, each table announced by name before its rows."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def table(self, name: str) -> None:
        self.line(b"\x00T" + name.encode("ascii") + b"\n")

    def line(self, data: bytes) -> None:
        self._hash.update(data)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


class HeldDigest(LineDigest):
    """What a stage digests, held until its turn comes in the stamp's table order (`release`): for a stage that
    runs while an earlier table is still being digested on another thread. Hashing the held bytes later, in order,
    is hashing them now."""

    def __init__(self) -> None:  # no hash of its own: everything goes to the digest it is released into
        self._held: list[bytes] = []

    def line(self, data: bytes) -> None:
        self._held.append(data)

    def hexdigest(self) -> str:
        raise TypeError("a held digest has no digest of its own: release it into the build's")

    def release(self, into: LineDigest) -> None:
        """Everything held, into `into`, in the order it was digested here."""
        for data in self._held:
            into.line(data)
        self._held.clear()


def row_line(columns: Sequence[str], values: Sequence[object]) -> bytes:
    """The one rendering of a row that the build loads and the digest covers: `{column: value}` in column order, a
    line break after it.

    Raises:
        ValueError: `values` are not as many as `columns`.
    """
    if len(columns) != len(values):
        raise ValueError(f"a row of {len(values)} values for {len(columns)} columns")
    # The line break appended by orjson as it renders: `+ b"\n"` would copy the whole line again.
    return orjson.dumps(dict(zip(columns, values, strict=False)), option=orjson.OPT_APPEND_NEWLINE)  # counted above


def digest_tables(connection: duckdb.DuckDBPyConnection, tables: Iterable[tuple[str, tuple[str, ...], str]],
                  schema: str = "") -> str:
    """The digest of tables already loaded, read back in their stamped order: (name, columns, order by)."""
    digest = LineDigest()
    for name, columns, order in tables:
        digest.table(name)
        cursor = connection.execute(
            f"SELECT {', '.join(columns)} FROM {schema}{name} ORDER BY {order}"  # noqa: S608 - our own names
        )
        while batch := cursor.fetchmany(8192):
            for values in batch:
                digest.line(row_line(columns, values))
    return digest.hexdigest()


def _record_path(store: Path) -> Path:
    name = hashlib.sha256(str(store).encode("utf-8")).hexdigest()[:32]
    return state_dir() / VERIFIED_DIR / f"{name}.json"


def _mac(secret: bytes, fields: dict[str, object]) -> str:
    body = _DOMAIN + orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)
    return hmac.new(secret, body, hashlib.sha256).hexdigest()


def remember_verified(store: Path, identity: tuple[int, ...], build_id: str, stamp: str, secret: bytes) -> None:
    """Record that the file at `store` with `identity` holds exactly the rows its stamp digests.

    Best effort: a record that cannot be written only costs the next reader a full digest.
    """
    if _wal_present(store):
        return  # nothing to vouch for: a reader refuses a store with a WAL beside it
    fields: dict[str, object] = {"store": str(store), "identity": list(identity), "buildId": build_id,
                                 "stamp": stamp, "walAbsent": True}
    target = _record_path(store)
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        temp.write_bytes(orjson.dumps({**fields, "mac": _mac(secret, fields)}))
        os.replace(temp, target)


def was_verified(store: Path, identity: tuple[int, ...], build_id: str, stamp: str, secret: bytes) -> bool:
    """Whether a genuine record says the file at `store` with `identity` was verified (or built) as stamped,
    with no write-ahead log beside it then and now."""
    if _wal_present(store):
        return False
    try:
        recorded = orjson.loads(_record_path(store).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False
    if not isinstance(recorded, dict) or not isinstance(recorded.get("mac"), str):
        return False
    fields: dict[str, object] = {"store": str(store), "identity": list(identity), "buildId": build_id,
                                 "stamp": stamp, "walAbsent": True}
    return hmac.compare_digest(_mac(secret, fields), recorded["mac"])


def _wal_present(store: Path) -> bool:
    """Whether anything (a file, a link, a FIFO) sits at the store's write-ahead-log name; unreadable counts."""
    try:
        refuse_write_ahead_log(store, DUCKDB_WAL_SUFFIX)
    except StoreFileFault:
        return True
    return False
