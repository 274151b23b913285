"""The ranked retrieval index: SQLite FTS5 tables (BM25, trigram) over one canonical state, published beside it.

`theurian index build` writes and stamps `knowledge-index-<buildId>.sqlite` (knowledge/index_stamp.py), then the
index pointer (`knowledge-index.json`, knowledge/index_pointer.py) naming the build id, the state hash it was built
from and the disclosure ceiling it was built under. Only items a caller could be shown go in — surfaceable status,
sensitivity at or below the ceiling — so a withheld item never moves a BM25 statistic (term frequencies, document
lengths) that ranks what is shown. A search uses the index only when both the state hash and the ceiling match,
and only once the file's stamp is this installation's and its rows are the rows stamped (`open_verified_index`);
otherwise it falls back. The pointer and the index's `meta` table name the channels the build offers
(knowledge/channels.py); every fact the pointer states must be what the stamped `meta` says.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from ulid import ULID

from knowledge.builds import build_lock, sweep
from knowledge.errors import IndexDamagedError
from knowledge.fusion import WORD_CHANNELS
from knowledge.index_pointer import INDEX_FILE, IndexPointer, publish_index_pointer, read_index_pointer
from knowledge.index_stamp import (
    INDEX_SCHEMA_VERSION,
    NOT_THE_NAMED_BUILD,
    check_pointer,
    stamp_index,
    verified,
)
from knowledge.integrity import SURFACEABLE_SQL
from knowledge.migrations import CONTENT_PREFIX
from knowledge.secret_gate import refuse_secrets
from knowledge.state import (
    open_read_only,
    project_key,
    require_pointer,
    state_folder,
)
from knowledge.state_stamp import check_state
from knowledge.vocabulary import disclosable
from theurian.containment import resolve_inside
from theurian.embedding import EmbeddingModel, load_model
from theurian.errors import StoreFileFault
from theurian.installation import build_stamp_secret
from theurian.project import INDEX_FILE_PREFIX, KNOWLEDGE_DIR, STATE_DIR
from theurian.stamp import STALE_PREFIX
from theurian.stamped_store import (
    SQLITE_BUSY_SECONDS,
    SQLITE_WAL_SUFFIX,
    VerifiedStores,
    file_identity,
    open_sqlite_read_only,
    refuse_write_ahead_log,
)


def refuse_indexed_secrets(root: Path, rows: list[tuple[str, str, str, str, str]]) -> None:
    """Refuse to index a revision whose title or body holds a secret, naming its content file and line."""
    files = [f"{KNOWLEDGE_DIR}/{str(row[4]).removeprefix(CONTENT_PREFIX)}" for row in rows]
    texts = ((f"{name} (title)", row[2]) for name, row in zip(files, rows, strict=True))
    bodies = ((name, row[3]) for name, row in zip(files, rows, strict=True))
    refuse_secrets(root, [*texts, *bodies], nothing_done="no index was built")


def build_index(root: Path, ceiling: str, *, raptor: bool = False, model: EmbeddingModel | None = None) -> IndexPointer:
    """Build and publish an index over the active state (the previous index stays readable until replaced).

    Every channel is built: the word tables, the dense vectors of `model` (the installation's model when None),
    and with `raptor` the extractive summary tree.

    Raises:
        StateMissingError, StateUnreadableError: there is no readable active state to index.
        ConfigError: the installation's embedding model cannot be loaded.
    """
    require_pointer(root, root.name)  # before the lock: no state, no state folder to create
    embedder = model if model is not None else load_model()
    folder = state_folder(root)
    # Apply and index builds share one lock, so the state indexed is not swept away mid-build either.
    with build_lock(folder):
        return _build_locked(root, folder, ceiling, raptor, embedder)


def _disclosable_rows(state: sqlite3.Connection, ceiling: str) -> list[tuple[str, str, str, str, str]]:
    """(item_id, revision_id, title, body, content_file) of every item a caller under `ceiling` may see, in item-id
    order: the only rows any channel or summary is ever built from (the content file names a refused secret)."""
    allowed = ", ".join(f"'{s}'" for s in disclosable(ceiling))
    return state.execute(
        "SELECT i.item_id, r.revision_id, r.title, r.body, r.content_file FROM knowledge_items i "  # noqa: S608
        "JOIN revisions r "
        "ON r.project_id = i.project_id AND r.revision_id = i.current_revision_id "
        f"WHERE i.project_id = ? AND i.status IN ({SURFACEABLE_SQL}) "
        f"AND i.sensitivity IN ({allowed}) ORDER BY i.item_id",
        (project_key(state),),
    ).fetchall()


def _build_locked(root: Path, folder: Path, ceiling: str, raptor: bool, model: EmbeddingModel) -> IndexPointer:
    # numpy is imported only where it is used: its BLAS starts threads, and `review build`, which imports the tool
    # registry (and so this module), forks its lake readers only from a process with one thread.
    from knowledge.dense import write_dense
    from knowledge.postings import write_postings
    from knowledge.raptor_store import write_raptor

    pointer = require_pointer(root, root.name)
    secret = build_stamp_secret()
    build_id = str(ULID())
    name = f"{INDEX_FILE_PREFIX}{build_id}.sqlite"
    path = folder / name
    try:
        with (
            contextlib.closing(open_read_only(root, pointer)) as state,
            contextlib.closing(sqlite3.connect(path, isolation_level=None)) as index,
        ):
            # Indexed only from the state this installation built: a planted or edited one is refused here too.
            check_state(state, project_key(state), pointer.migration_count, secret)
            disclosed = _disclosable_rows(state, ceiling)
            index.executescript(
                "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                "CREATE VIRTUAL TABLE docs USING fts5(item_id UNINDEXED, revision_id UNINDEXED, title, body, "
                "tokenize = 'unicode61 remove_diacritics 2');"
            )
            index.execute("BEGIN")
            refuse_indexed_secrets(root, disclosed)
            rows = [(item_id, revision_id, title, body) for item_id, revision_id, title, body, _ in disclosed]
            index.executemany("INSERT INTO docs VALUES (?, ?, ?, ?)", rows)
            postings_digest = write_postings(index)
            texts = [(item_id, title, body) for item_id, _, title, body in rows]
            vectors = write_dense(index, model, texts)
            raptor_digest = write_raptor(index, model, vectors, texts) if raptor else None
            published = IndexPointer(
                build_id,
                pointer.state_hash,
                ceiling,
                name,
                (*WORD_CHANNELS, "dense", *(("summary",) if raptor else ())),
                vectors.identity,
                vectors.digest,
                raptor_digest,
                postings_digest,
            )
            index.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [
                    ("build_id", build_id),
                    ("state_hash", pointer.state_hash),
                    ("disclosure_ceiling", ceiling),
                    ("schema_version", str(INDEX_SCHEMA_VERSION)),
                    ("channels", ",".join(published.channels)),
                    ("postings_sha256", postings_digest),
                    *((("raptor_sha256", raptor_digest),) if raptor_digest is not None else ()),
                ],
            )
            index.execute("COMMIT")
            stamp_index(index, build_id, secret)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    publish_index_pointer(folder, published)
    current = read_index_pointer(root)
    sweep(folder, INDEX_FILE, INDEX_FILE_PREFIX, (name, current.index_file if current else None))
    return published


def open_index(root: Path, pointer: IndexPointer, stores: VerifiedStores | None = None) -> sqlite3.Connection | None:
    """`open_verified_index`, or None when it refuses the index."""
    try:
        return open_verified_index(root, pointer, stores)
    except IndexDamagedError:
        return None


def open_verified_index(root: Path, pointer: IndexPointer, stores: VerifiedStores | None = None) -> sqlite3.Connection:
    """The index database, read-only, once its stamp and rows are what this installation built
    (knowledge/index_stamp.py: verified once per file identity in `stores`, in full on every call without) and the
    pointer states only what its stamped `meta` says.

    Damage a digest cannot see (a page no query reads) surfaces as a `sqlite3.DatabaseError` from the channel
    queries, which the search also treats as unreadable.

    Raises:
        IndexDamagedError: why the index is refused (its message is the reason).
        PathEscapeError: the index file resolves outside `.theurian/state/`.
    """
    if pointer.schema_version != INDEX_SCHEMA_VERSION:
        raise IndexDamagedError(f"{STALE_PREFIX} built by a superseded index schema ({pointer.schema_version})")
    path = resolve_inside(root, f"{STATE_DIR}/{pointer.index_file}")
    try:
        before = file_identity(path)
    except StoreFileFault as exc:
        raise IndexDamagedError(f"unreadable: {exc.reason}") from None
    try:
        refuse_write_ahead_log(path, SQLITE_WAL_SUFFIX)
    except StoreFileFault as exc:
        raise IndexDamagedError(exc.reason) from None
    try:
        connection = open_sqlite_read_only(path, timeout=SQLITE_BUSY_SECONDS, check_same_thread=False)
    except sqlite3.DatabaseError as exc:
        raise IndexDamagedError(f"unreadable: {type(exc).__name__}") from None
    try:
        build_id = verified(stores, path, before, connection)
        meta = {str(key): str(value) for key, value in connection.execute("SELECT key, value FROM meta")}
        check_pointer(meta, _stated(pointer))
        if build_id != pointer.build_id or pointer.index_file != f"{INDEX_FILE_PREFIX}{build_id}.sqlite":
            raise IndexDamagedError(NOT_THE_NAMED_BUILD)
    except sqlite3.DatabaseError as exc:
        connection.close()
        raise IndexDamagedError(f"unreadable: {type(exc).__name__}") from None
    except IndexDamagedError:
        connection.close()
        raise
    return connection


def _stated(pointer: IndexPointer) -> dict[str, str | None]:
    """What the pointer says about its build, as the build's `meta` holds it (None: `meta` holds no such key)."""
    model = pointer.model
    return {
        "build_id": pointer.build_id,
        "state_hash": pointer.state_hash,
        "disclosure_ceiling": pointer.disclosure_ceiling,
        "schema_version": str(pointer.schema_version),
        "channels": ",".join(pointer.channels),
        "postings_sha256": pointer.postings_sha256,
        "model_name": None if model is None else model.name,
        "model_dimension": None if model is None else str(model.dimension),
        "model_weights_sha256": None if model is None else model.weights_sha256,
        "dense_sha256": pointer.dense_sha256,
        "raptor_sha256": pointer.raptor_sha256,
    }
