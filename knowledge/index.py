"""The ranked retrieval index: SQLite FTS5 tables (BM25, trigram) over one canonical state, published beside it.

`theurian index build` writes `knowledge-index-<buildId>.sqlite` and then the index pointer
(`knowledge-index.json`) naming the build id, the state hash it was built from and the disclosure ceiling it
was built under. Only items a caller could be shown go in — surfaceable status, sensitivity at or below the
ceiling — so a withheld item never moves a BM25 statistic (term frequencies, document lengths) that ranks what
is shown. A search uses the index only when both the state hash and the ceiling match; otherwise it falls
back. The pointer and the index's `meta` table name the channels the build offers (knowledge/channels.py).
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson
from ulid import ULID

from evidence.errors import NotRegularFile
from knowledge.builds import build_lock, sweep
from knowledge.fusion import WORD_CHANNELS
from knowledge.integrity import SURFACEABLE_SQL
from knowledge.migrations import CONTENT_PREFIX, KNOWLEDGE_DIR
from knowledge.secret_gate import refuse_secrets
from knowledge.state import (
    is_regular_file,
    open_read_only,
    project_key,
    read_small_file,
    require_pointer,
    state_folder,
)
from knowledge.state_stamp import check_state
from knowledge.vocabulary import disclosable
from theurian.containment import resolve_inside
from theurian.durable import write_bytes_durably
from theurian.embedding import EmbeddingModel, ModelIdentity, load_model
from theurian.installation import build_stamp_secret
from theurian.project import STATE_DIR

INDEX_POINTER_NAME: Final = "knowledge-index.json"
INDEX_FILE: Final = re.compile(r"^knowledge-index-[0-9A-HJKMNP-TV-Z]{26}\.sqlite$")
# 2: the word postings, the trigram vocabulary, the dense vectors and the summary tree, and the channels the build
# offers in the pointer and `meta`. A version-1 pointer is not
# read (the search falls back with `no-index` until `theurian index build` runs again).
INDEX_SCHEMA_VERSION: Final = 2


@dataclass(frozen=True)
class IndexPointer:
    build_id: str
    state_hash: str
    disclosure_ceiling: str
    index_file: str
    channels: tuple[str, ...] = field(default=WORD_CHANNELS)
    model: ModelIdentity | None = None  # the embedding model the dense vectors were made with
    dense_sha256: str | None = None  # knowledge/dense.py's digest of those vectors
    raptor_sha256: str | None = None  # knowledge/raptor.py's digest of the summary tree (--raptor only)
    postings_sha256: str = ""  # knowledge/postings.py's digest of the word postings


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
    build_id = str(ULID())
    name = f"knowledge-index-{build_id}.sqlite"
    path = folder / name
    try:
        with (
            contextlib.closing(open_read_only(root, pointer)) as state,
            contextlib.closing(sqlite3.connect(path, isolation_level=None)) as index,
        ):
            # Indexed only from the state this installation built: a planted or edited one is refused here too.
            check_state(state, project_key(state), pointer.migration_count, build_stamp_secret())
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
                ],
            )
            index.execute("COMMIT")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    write_bytes_durably(folder / INDEX_POINTER_NAME, orjson.dumps(_document(published), option=orjson.OPT_INDENT_2))
    current = read_index_pointer(root)
    sweep(folder, INDEX_FILE, "knowledge-index-", (name, current.index_file if current else None))
    return published


def _document(published: IndexPointer) -> dict[str, Any]:
    model = published.model
    return {
        "buildId": published.build_id,
        "stateHash": published.state_hash,
        "disclosureCeiling": published.disclosure_ceiling,
        "indexFile": published.index_file,
        "schemaVersion": INDEX_SCHEMA_VERSION,
        "channels": list(published.channels),
        "embeddingModel": None
        if model is None
        else {
            "name": model.name,
            "dimension": model.dimension,
            "weightsSha256": model.weights_sha256,
        },
        "denseSha256": published.dense_sha256,
        "raptorSha256": published.raptor_sha256,
        "postingsSha256": published.postings_sha256,
    }


def read_index_pointer(root: Path) -> IndexPointer | None:
    """The published index, or None when none was built or the pointer is not one this build wrote."""
    try:
        document = orjson.loads(read_small_file(resolve_inside(root, f"{STATE_DIR}/{INDEX_POINTER_NAME}")))
        pointer = IndexPointer(
            str(document["buildId"]),
            str(document["stateHash"]),
            str(document["disclosureCeiling"]),
            str(document["indexFile"]),
            tuple(str(channel) for channel in document["channels"]),
            _identity(document["embeddingModel"]),
            _optional(document["denseSha256"]),
            _optional(document["raptorSha256"]),
            str(document["postingsSha256"]),
        )
        if document["schemaVersion"] != INDEX_SCHEMA_VERSION or not INDEX_FILE.match(pointer.index_file):
            return None
    except FileNotFoundError:
        return None
    except (NotRegularFile, OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    return pointer


def _identity(value: Any) -> ModelIdentity | None:
    if value is None:
        return None
    return ModelIdentity(str(value["name"]), int(value["dimension"]), str(value["weightsSha256"]))


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)


def open_index(root: Path, pointer: IndexPointer) -> sqlite3.Connection | None:
    """The index database, read-only, or None when it cannot be read or is not the build the pointer names.

    The probe reads `meta` alone (a counting probe read every row on every call); damage deeper in the file
    surfaces as a `sqlite3.DatabaseError` from the channel queries, which the search also treats as unreadable.
    """
    path = resolve_inside(root, f"{STATE_DIR}/{pointer.index_file}")
    if not is_regular_file(path):
        return None
    try:
        connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
    except sqlite3.DatabaseError:
        return None
    try:
        row = connection.execute("SELECT value FROM meta WHERE key = 'build_id'").fetchone()
    except sqlite3.DatabaseError:
        connection.close()
        return None
    if row is None or row[0] != pointer.build_id:
        connection.close()
        return None
    return connection
