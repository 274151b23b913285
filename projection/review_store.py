"""The review store: where it lives, and how a reader opens it and trusts it (its tables, columns and versions are
`projection.review_layout`).

A DuckDB file at `.theurian/state/review-store.duckdb`, built by `projection.review_build` into a new file
and swapped in whole, so a store is immutable once built. A reader attaches it read-only and trusts nothing in
it until its build stamp verifies under this installation's secret and its rows digest as stamped — a digest a
reader skips when this installation's verification record vouches for the very file it opened
(`projection.review_digest`); every check made of the attached file is `projection.review_verify`. A verified
store is kept in the caller's verify-once cache (`theurian.stamped_store.VerifiedStores`, one per daemon) as one
attachment every caller of that file shares.

    ReviewStoreUnavailable   the store cannot be served: absent, unstamped, foreign, stale, unreadable or
                             damaged (`reason` says which, for logs and tests; a caller is shown one message)
    ReviewStoreEscapeError   the store file resolves outside `.theurian/state/` (a PathEscapeError)

The queries that serve `review.search` are in `projection.review_query`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import duckdb

from projection.errors import ReviewStoreEscapeError, ReviewStorePathUnsupported, ReviewStoreUnavailable
from projection.review_layout import STORE_KIND
from projection.review_verify import verify_attached
from theurian.containment import resolve_inside
from theurian.errors import PathEscapeError, StoreFileFault
from theurian.installation import build_stamp_secret
from theurian.places import REVIEW_STORE_ESCAPE_CURE
from theurian.project import REVIEW_STORE_NAME, STATE_DIR
from theurian.project_path import duckdb_misreads
from theurian.stamped_store import DUCKDB_WAL_SUFFIX, Shelf, VerifiedStores, refuse_write_ahead_log
from theurian.stamped_store import file_identity as shared_file_identity
from theurian.stamped_store import publish_path as shared_publish_path
from theurian.stamped_store import wal_path as shared_wal_path

STORE_NAME: Final = REVIEW_STORE_NAME
STORE_RELATIVE: Final = f"{STATE_DIR}/{STORE_NAME}"

# Every way reading a store's values can fail besides DuckDB's own errors: a planted or damaged file can hold a
# column retyped to one the build never writes (a DECIMAL, a HUGEINT past 64 bits, an INTERVAL, a BLOB), which
# the row rendering cannot encode. Each is a damaged store, never an internal fault.
READ_FAULTS: Final = (duckdb.Error, TypeError, ValueError, OverflowError)


def fetched_rows(result: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    """Every row of an executed query, as `fetchall` gives them (the same int, str and None), read a column at a
    time: DuckDB converts a column into one array far faster than it builds each row's tuple (at 50,000 records
    0.12 s against 0.17 s for `records`, 0.10 against 0.19 for `texts`). A NULL comes back masked, and `tolist`
    turns it into None."""
    columns = result.fetchnumpy()
    return list(zip(*[column.tolist() for column in columns.values()], strict=True))


def store_path(root: Path) -> Path:
    """The store's path, resolved and contained in `.theurian/state/` (SEC-7).

    Raises:
        PathEscapeError: `.theurian/state` itself resolves outside the project root.
        ReviewStoreEscapeError: the store file (a symbolic link, say) resolves outside `.theurian/state/`.
        ReviewStorePathUnsupported: the resolved path holds a character DuckDB cannot open a database through.
    """
    state = resolve_inside(root, STATE_DIR)
    try:
        path = resolve_inside(state, STORE_NAME)
    except PathEscapeError as exc:
        raise ReviewStoreEscapeError(exc.message, relative=STORE_RELATIVE) from exc
    if duckdb_misreads(str(path)):
        raise ReviewStorePathUnsupported
    return path


def publish_path(root: Path) -> Path:
    """Where a build puts the store (`theurian.stamped_store.publish_path`: the state folder's own entry, so a
    link planted at the store's name is replaced, never its target).

    Raises:
        PathEscapeError, ReviewStoreEscapeError: see `store_path`.
    """
    return shared_publish_path(root, STORE_NAME, store_path)


def wal_path(store: Path) -> Path:
    """The write-ahead log DuckDB would replay on attaching `store`, read-only included. A build checkpoints before
    it publishes, so no store of ours ever has one: the store is refused while one is there (docs/review-search.md).
    """
    return shared_wal_path(store, DUCKDB_WAL_SUFFIX)


@dataclass
class OpenStore:
    """A verified store, attached read-only as `s` in a private in-memory database.

    A private database, not `duckdb.connect(path)`: DuckDB caches one instance per path, so after a swap a
    plain connect would keep answering from the old file for as long as anyone still held it.
    """

    identity: tuple[int, ...]
    secret: bytes  # the secret it verified under: a rotated secret re-verifies every store
    connection: duckdb.DuckDBPyConnection

    def cursor(self) -> duckdb.DuckDBPyConnection:
        return self.connection.cursor()


def open_store(root: Path, stores: VerifiedStores | None = None) -> OpenStore:
    """The project's store, verified once per file in `stores` (a rebuild swaps in a new file, so a new
    identity); with no `stores`, verified afresh for this one caller.

    The store a shelf holds is one attachment shared by every caller of that file: each takes its own
    `cursor()` (DuckDB's cursors are safe to use from one thread each).

    Raises:
        PathEscapeError, ReviewStoreEscapeError: see `store_path`.
        ReviewStoreUnavailable: the store is absent, was not built here, is stale, unreadable or damaged.
    """
    path = store_path(root)
    key = str(path)
    secret = build_stamp_secret()
    shelf: Shelf[OpenStore] = (stores or VerifiedStores()).shelf(STORE_KIND)
    with shelf.lock(key):
        for attempt in range(SWAP_RETRIES + 1):
            identity = file_identity(path)
            cached = shelf.get(key, identity, secret)
            if cached is not None:
                return cached
            _release_superseded(shelf, key, identity)
            try:
                opened = _attach_and_verify(path, identity, secret)
            except _SwappedWhileOpening:
                if attempt == SWAP_RETRIES:
                    raise ReviewStoreUnavailable("swapped while it was being opened, again and again") from None
                continue  # a build published a new file between the look and the attach: open that one
            shelf.put(key, identity, secret, opened)
            return opened
    raise AssertionError("unreachable: the last attempt returns or raises")


def _release_superseded(shelf: Shelf[OpenStore], key: str, identity: tuple[int, ...]) -> None:
    held = shelf.held(key)
    if held is None:
        return
    shelf.drop(key)
    if held[0][:2] == identity[:2]:  # same inode: DuckDB lets one attachment hold a file, so let go of it first
        held[1].connection.close()


# A build swapping the store in between the identity read and DuckDB's attach is a race the reader loses, not a
# fault of the store: it opens the new file. Only builds finishing within milliseconds of each other, every time,
# exhaust the retries.
SWAP_RETRIES: Final = 3


class _SwappedWhileOpening(Exception):  # noqa: N818 - an internal signal, never leaves `open_store`
    """The file at the store's path changed between its identity read and its attach."""


def _attach_and_verify(path: Path, identity: tuple[int, ...], secret: bytes) -> OpenStore:
    connection = duckdb.connect(":memory:")
    try:
        escaped = str(path).replace("'", "''")
        connection.execute(f"ATTACH '{escaped}' AS s (READ_ONLY)")
        if file_identity(path) != identity:
            raise _SwappedWhileOpening
        verify_attached(connection, secret, path, identity)
    except (ReviewStoreUnavailable, _SwappedWhileOpening):
        connection.close()
        raise
    except READ_FAULTS as exc:
        connection.close()
        raise ReviewStoreUnavailable(f"unreadable: {type(exc).__name__}") from exc
    return OpenStore(identity, secret, connection)


def file_identity(path: Path) -> tuple[int, ...]:
    """The store file's identity (`theurian.stamped_store.file_identity`), checked to have no write-ahead log
    beside it.

    Taken before and after the attach, so a WAL planted at either moment is refused; the verification record
    binds this identity, so it vouches for a file that had no WAL when it was built or verified.
    """
    try:
        identity = shared_file_identity(path)
        refuse_write_ahead_log(path, DUCKDB_WAL_SUFFIX)
    except StoreFileFault as exc:
        raise ReviewStoreUnavailable(exc.reason) from None
    return identity


REVIEW_STORE_ESCAPE_REFUSAL: Final = (
    f"REVIEW_STORE_ESCAPE_REFUSAL: the review store {STORE_NAME} does not resolve inside .theurian/state/, "
    f"so nothing was read through it, and `theurian review build` meets the same refusal. {REVIEW_STORE_ESCAPE_CURE}"
)
