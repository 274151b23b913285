"""The ranked retrieval index: an SQLite FTS5 table (BM25) over one canonical state, published beside it.

`theurian index build` writes `knowledge-index-<buildId>.sqlite` and then the index pointer
(`knowledge-index.json`) naming the build id, the state hash it was built from and the disclosure ceiling it
was built under. Only items a caller could be shown go in — surfaceable status, sensitivity at or below the
ceiling — so a withheld item never moves a BM25 statistic (term frequencies, document lengths) that ranks what
is shown. A search uses the index only when both the state hash and the ceiling match; otherwise it falls
back.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import orjson
from ulid import ULID

from evidence.files import NotRegularFile
from knowledge.builds import build_lock, sweep
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
from knowledge.vocabulary import disclosable
from theurian.containment import resolve_inside
from theurian.durable import write_bytes_durably
from theurian.project import STATE_DIR

INDEX_POINTER_NAME: Final = "knowledge-index.json"
INDEX_FILE: Final = re.compile(r"^knowledge-index-[0-9A-HJKMNP-TV-Z]{26}\.sqlite$")
INDEX_SCHEMA_VERSION: Final = 1
TITLE_WEIGHT: Final = 4.0  # a term in the title says more about the item than the same term in the body
_TOKEN: Final = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class IndexPointer:
    build_id: str
    state_hash: str
    disclosure_ceiling: str
    index_file: str


def refuse_indexed_secrets(root: Path, rows: list[sqlite3.Row]) -> None:
    """Refuse to index a revision whose title or body holds a secret, naming its content file and line."""
    files = [f"{KNOWLEDGE_DIR}/{str(row[4]).removeprefix(CONTENT_PREFIX)}" for row in rows]
    texts = ((f"{name} (title)", row[2]) for name, row in zip(files, rows, strict=True))
    bodies = ((name, row[3]) for name, row in zip(files, rows, strict=True))
    refuse_secrets(root, [*texts, *bodies], nothing_done="no index was built")


def build_index(root: Path, ceiling: str) -> IndexPointer:
    """Build and publish an index over the active state (the previous index stays readable until replaced).

    Raises:
        StateMissingError, StateUnreadableError: there is no readable active state to index.
    """
    require_pointer(root, root.name)  # before the lock: no state, no state folder to create
    folder = state_folder(root)
    # Apply and index builds share one lock, so the state indexed is not swept away mid-build either.
    with build_lock(folder):
        return _build_locked(root, folder, ceiling)


def _build_locked(root: Path, folder: Path, ceiling: str) -> IndexPointer:
    pointer = require_pointer(root, root.name)
    build_id = str(ULID())
    name = f"knowledge-index-{build_id}.sqlite"
    path = folder / name
    allowed = ", ".join(f"'{s}'" for s in disclosable(ceiling))
    try:
        with (
            contextlib.closing(open_read_only(root, pointer)) as state,
            contextlib.closing(sqlite3.connect(path, isolation_level=None)) as index,
        ):
            key = project_key(state)
            index.executescript(
                "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                "CREATE VIRTUAL TABLE docs USING fts5(item_id UNINDEXED, revision_id UNINDEXED, title, body, "
                "tokenize = 'unicode61 remove_diacritics 2');"
            )
            index.execute("BEGIN")
            rows = state.execute(
                "SELECT i.item_id, r.revision_id, r.title, r.body, r.content_file FROM knowledge_items i "  # noqa: S608
                "JOIN revisions r ON r.project_id = i.project_id AND r.revision_id = i.current_revision_id "
                f"WHERE i.project_id = ? AND i.status IN ({SURFACEABLE_SQL}) "
                f"AND i.sensitivity IN ({allowed})",
                (key,),
            ).fetchall()
            refuse_indexed_secrets(root, rows)
            index.executemany("INSERT INTO docs VALUES (?, ?, ?, ?)", [tuple(row)[:4] for row in rows])
            index.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [
                    ("build_id", build_id),
                    ("state_hash", pointer.state_hash),
                    ("disclosure_ceiling", ceiling),
                    ("schema_version", str(INDEX_SCHEMA_VERSION)),
                ],
            )
            index.execute("COMMIT")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    published = IndexPointer(build_id, pointer.state_hash, ceiling, name)
    document = {
        "buildId": build_id,
        "stateHash": pointer.state_hash,
        "disclosureCeiling": ceiling,
        "indexFile": name,
        "schemaVersion": INDEX_SCHEMA_VERSION,
    }
    write_bytes_durably(folder / INDEX_POINTER_NAME, orjson.dumps(document, option=orjson.OPT_INDENT_2))
    current = read_index_pointer(root)
    sweep(folder, INDEX_FILE, "knowledge-index-", (name, current.index_file if current else None))
    return published


def read_index_pointer(root: Path) -> IndexPointer | None:
    """The published index, or None when none was built or the pointer is not one this build wrote."""
    try:
        document = orjson.loads(read_small_file(resolve_inside(root, f"{STATE_DIR}/{INDEX_POINTER_NAME}")))
        pointer = IndexPointer(
            str(document["buildId"]),
            str(document["stateHash"]),
            str(document["disclosureCeiling"]),
            str(document["indexFile"]),
        )
        if document["schemaVersion"] != INDEX_SCHEMA_VERSION or not INDEX_FILE.match(pointer.index_file):
            return None
    except FileNotFoundError:
        return None
    except (NotRegularFile, OSError, orjson.JSONDecodeError, KeyError, TypeError):
        return None
    return pointer


def open_index(root: Path, pointer: IndexPointer) -> sqlite3.Connection | None:
    """The index database, read-only, or None when it cannot be read."""
    path = resolve_inside(root, f"{STATE_DIR}/{pointer.index_file}")
    if not is_regular_file(path):
        return None
    try:
        connection = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
        connection.execute("SELECT count(*) FROM docs").fetchone()
    except sqlite3.DatabaseError:
        return None
    return connection


def match_expression(query: str) -> str | None:
    """The query's words as quoted FTS5 strings joined by OR: no FTS syntax in a query ever means anything."""
    words = _TOKEN.findall(query)
    if not words:
        return None
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in dict.fromkeys(words))


def ranked_channels(
    index: sqlite3.Connection, expression: str, depth: int
) -> dict[str, list[tuple[str, str]]]:
    """Each channel's (item_id, revision_id) list, best first: `lexical` (title and body), `title` alone."""
    lexical = index.execute(
        "SELECT item_id, revision_id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 0, 0, ?, 1.0) LIMIT ?",
        (expression, TITLE_WEIGHT, depth),
    ).fetchall()
    title = index.execute(
        "SELECT item_id, revision_id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?",
        (f"title : ({expression})", depth),
    ).fetchall()
    return {"lexical": lexical, "title": title}
