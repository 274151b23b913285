"""`theurian review build`: the evidence lake under `.theurian/review/`, into the review store.

Every record file is parsed with orjson and checked by the compiled validator; a bad file is reported by its
project-relative path and skipped. The rows are sorted into the total order, written once as newline-delimited
JSON to a temp file beside the store — digested as they are written — and bulk-loaded with one `read_json` per
table into a new DuckDB file (docs/review-search.md has the measurements that chose this route). The file is
stamped, fsynced and swapped in with `os.replace`: a reader holding the old store is never disturbed, and a
failed build leaves the old store exactly as it was.
"""

from __future__ import annotations

import gc
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import duckdb

from projection.build_temp import building_folder, sweep_leftovers
from projection.review_digest import LineDigest, remember_verified, row_line
from projection.review_lake import iter_records, last_seen
from projection.review_rows import Projected, fold, project
from projection.review_store import (
    BLOCK_COLUMNS,
    BLOCK_RECORDS,
    DIGEST_TABLES,
    EVIDENCE_FORMAT_VERSION,
    RECORD_COLUMNS,
    REVIEW_SCHEMA_VERSION,
    SCHEMA,
    STORE_KIND,
    STORE_RELATIVE,
    TEXT_COLUMNS,
    file_identity,
    publish_path,
    wal_path,
)
from projection.stamp import STAMP_COLUMNS, StampFields, new_build_id, stamp_row
from theurian.containment import resolve_inside
from theurian.durable import publish_built_file
from theurian.errors import TheurianError
from theurian.installation import build_stamp_secret
from theurian.project import REVIEW_DIR

_TYPES: Final = {
    "ordinal": "BIGINT", "pull_request": "BIGINT", "lead_position": "INTEGER", "position": "INTEGER",
    "block": "BIGINT",
}


class ReviewLakeNotAFolder(TheurianError):  # noqa: N818 - it names what the lake is
    """`.theurian/review` exists but is not a folder: building from it would publish an empty store."""


@dataclass(frozen=True)
class BuildSummary:
    """What a build read and wrote; `skipped` names each file left out, project-relative, with why."""

    store: str  # project-relative
    records: int
    texts: int
    skipped: list[tuple[str, str]] = field(default_factory=list)
    build_id: str = ""

    def describe(self) -> str:
        lines = [f"skipped {path}: {why}" for path, why in self.skipped]
        lines.append(
            f"built {self.store}: {self.records} records ({self.texts} texts); "
            f"{len(self.skipped)} invalid files skipped"
        )
        return "\n".join(lines)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the build's bulk phase.

    The build holds every projected row until the sort; each collection of the oldest generation walks all of
    them again, which cost a 40,000-record build a third of its read phase. Those rows hold no cycles, so
    reference counting frees them all the same.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def build_review_store(root: Path) -> BuildSummary:
    """Rebuild the review store of the project at `root` from its evidence lake.

    The store path is resolved (and its containment checked) before any evidence file is read. The new store
    replaces the state folder's entry itself, never a link's target (`review_store.publish_path`).

    Raises:
        PathEscapeError: `.theurian/state` or `.theurian/review` resolves outside `root`.
        ReviewStoreEscapeError: the store file resolves outside `.theurian/state/`.
        ConfigError: the installation's build-stamp secret is damaged.
        ReviewLakeNotAFolder: `.theurian/review` exists and is not a folder (the old store is kept).
    """
    target = publish_path(root)
    secret = build_stamp_secret()
    lake = resolve_inside(root, REVIEW_DIR)
    if os.path.lexists(lake) and not lake.is_dir():
        raise ReviewLakeNotAFolder(
            f"{REVIEW_DIR} is not a folder, so there is no evidence lake to build from; the store was left as it "
            f"was. Remove or rename {REVIEW_DIR}, then ingest again and run `theurian review build`."
        )
    seen, skipped = last_seen(root)
    skipped = [(f"{REVIEW_DIR}/{path}", why) for path, why in skipped]
    projected: list[Projected] = []
    with _collector_paused():
        for found in iter_records(root):
            if found.record is None:
                skipped.append((f"{REVIEW_DIR}/{found.record_path}", found.error or "invalid"))
            else:
                projected.append(project(found.record_path, found.record, seen.get(found.record_path)))
        projected.sort(key=lambda item: item.sort_key)
        target.parent.mkdir(parents=True, exist_ok=True)
        target = publish_path(root)  # the state folder now exists: check again that creating it escaped nowhere
        sweep_leftovers(target.parent, target.name)  # what an interrupted build before this one left behind
        build_id = new_build_id()
        texts = _write_store(target, projected, build_id, secret)
    skipped.sort()
    return BuildSummary(STORE_RELATIVE, len(projected), texts, skipped, build_id)


def _write_store(target: Path, projected: list[Projected], build_id: str, secret: bytes) -> int:
    with building_folder(target.parent, target.name) as temp:
        database = temp / "store.duckdb"
        sources = {name: temp / f"{name}.ndjson" for name, _, _ in DIGEST_TABLES}
        digest = LineDigest()
        text_count = _write_lines(sources, projected, digest)
        connection = duckdb.connect(str(database))
        try:
            connection.execute(SCHEMA)
            for name, columns, _ in DIGEST_TABLES:
                _load(connection, name, columns, sources[name])
            fields = StampFields(STORE_KIND, REVIEW_SCHEMA_VERSION, EVIDENCE_FORMAT_VERSION, build_id,
                                 len(projected), digest.hexdigest())
            row = stamp_row(fields, secret)
            connection.execute(f"INSERT INTO build_stamp ({STAMP_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)", row)  # noqa: S608 - a constant column list
            stamp = str(row[-1])
            connection.execute("CHECKPOINT")
        finally:
            connection.close()
        # The published file replaces the store whole: a WAL beside the old one belongs to no store this build
        # made, and a reader refuses a store with one beside it. Removed first, so the new file never has one.
        remove_stale_wal(target)
        publish_built_file(database, target)
        # The rows just loaded are the lines just digested: vouch for this very file, so its first reader
        # need not read every row back (projection.review_digest).
        remember_verified(target, file_identity(target), build_id, stamp, secret)
    return text_count


def remove_stale_wal(target: Path) -> None:
    """Remove whatever sits at the store's WAL name in the resolved state folder, never following a link: a link
    (or a FIFO, or a file) is unlinked itself, a real folder removed without following any link inside it.

    Raises:
        OSError: it could not be removed (the build fails rather than publish a store every read would refuse).
    """
    wal = wal_path(target)
    try:
        mode = os.lstat(wal).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(wal)
    else:
        os.unlink(wal)


def _write_lines(sources: dict[str, Path], projected: list[Projected], digest: LineDigest) -> int:
    """Every table's NDJSON, digested as written; returns how many text rows there are."""
    texts = 0
    words: set[str] = set()
    with open(sources["records"], "wb") as records, open(sources["texts"], "wb") as text_file, \
            open(sources["word_blocks"], "wb") as blocks:
        digest.table("records")
        for ordinal, item in enumerate(projected):
            line = row_line(RECORD_COLUMNS, (ordinal, *item.record.values()))
            records.write(line)
            digest.line(line)
        digest.table("texts")
        block_lines: list[bytes] = []
        for ordinal, item in enumerate(projected):
            for position, (channel, text) in enumerate(item.texts):
                folded = fold(text)
                # str.split and q.split agree on what whitespace is: the index's soundness rests on it.
                words.update(folded.split())
                line = row_line(TEXT_COLUMNS, (ordinal, position, channel, text, folded))
                text_file.write(line)
                digest.line(line)
                texts += 1
            if (ordinal + 1) % BLOCK_RECORDS == 0 or ordinal + 1 == len(projected):
                block_lines.append(row_line(BLOCK_COLUMNS, (ordinal // BLOCK_RECORDS, "\x00".join(sorted(words)))))
                words.clear()
        digest.table("word_blocks")
        for line in block_lines:
            blocks.write(line)
            digest.line(line)
    return texts


def _load(connection: duckdb.DuckDBPyConnection, table: str, columns: tuple[str, ...], source: Path) -> None:
    # Explicit column types: nothing is sniffed, so a text that looks like a number or a date stays text.
    spec = "{" + ", ".join(f"'{name}': '{_TYPES.get(name, 'VARCHAR')}'" for name in columns) + "}"
    escaped = str(source).replace("'", "''")
    connection.execute(
        f"INSERT INTO {table} SELECT {', '.join(columns)} FROM read_json('{escaped}', "  # noqa: S608
        f"format = 'newline_delimited', columns = {spec}, maximum_object_size = 1073741824)"
    )
