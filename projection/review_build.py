"""`theurian review build`: the evidence lake under `.theurian/review/`, into the review store.

Every record file is parsed with orjson and checked by the compiled validator; a bad file is reported by its
project-relative path and skipped. The rows are sorted into the total order, written once as newline-delimited
JSON to a temp file beside the store, and bulk-loaded with one `read_json` per table into a new DuckDB file
(docs/review-search.md has the measurements that chose this route). The rows are digested and stamped in that
file, which is then fsynced and swapped in with `os.replace`: a reader holding the old store is never
disturbed, and a failed build leaves the old store exactly as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import duckdb
import orjson

from projection.review_lake import iter_records, last_seen
from projection.review_rows import Projected, fold, project
from projection.review_store import (
    EVIDENCE_FORMAT_VERSION,
    RECORD_COLUMNS,
    REVIEW_SCHEMA_VERSION,
    SCHEMA,
    STORE_KIND,
    STORE_RELATIVE,
    TEXT_COLUMNS,
    rows_digest,
    store_path,
)
from projection.stamp import StampFields, compute_stamp, new_build_id
from theurian.durable import fsync_directory
from theurian.installation import build_stamp_secret
from theurian.project import REVIEW_DIR

_TYPES: Final = {
    "ordinal": "BIGINT", "pull_request": "BIGINT", "lead_position": "INTEGER", "position": "INTEGER",
}


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


def build_review_store(root: Path) -> BuildSummary:
    """Rebuild the review store of the project at `root` from its evidence lake.

    The store path is resolved (and its containment checked) before any evidence file is read.

    Raises:
        PathEscapeError: `.theurian/state` resolves outside `root`.
        ReviewStoreEscapeError: the store file resolves outside `.theurian/state/`.
        ConfigError: the installation's build-stamp secret is damaged.
    """
    target = store_path(root)
    secret = build_stamp_secret()
    seen, skipped = last_seen(root)
    skipped = [(f"{REVIEW_DIR}/{path}", why) for path, why in skipped]
    projected: list[Projected] = []
    for found in iter_records(root):
        if found.record is None:
            skipped.append((f"{REVIEW_DIR}/{found.record_path}", found.error or "invalid"))
        else:
            projected.append(project(found.record_path, found.record, seen.get(found.record_path)))
    projected.sort(key=lambda item: item.sort_key)
    target.parent.mkdir(parents=True, exist_ok=True)
    target = store_path(root)  # the state folder now exists: check again that creating it escaped nowhere
    build_id = new_build_id()
    texts = _write_store(target, projected, build_id, secret)
    skipped.sort()
    return BuildSummary(STORE_RELATIVE, len(projected), texts, skipped, build_id)


def _write_store(target: Path, projected: list[Projected], build_id: str, secret: bytes) -> int:
    folder = target.parent
    temp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".building", dir=folder))
    try:
        database = temp / "store.duckdb"
        records_file, texts_file = temp / "records.ndjson", temp / "texts.ndjson"
        _write_lines(records_file, _record_rows(projected))
        text_count = _write_lines(texts_file, _text_rows(projected))
        connection = duckdb.connect(str(database))
        try:
            connection.execute(SCHEMA)
            _load(connection, "records", RECORD_COLUMNS, records_file)
            _load(connection, "texts", TEXT_COLUMNS, texts_file)
            count, digest = rows_digest(connection)
            fields = StampFields(STORE_KIND, REVIEW_SCHEMA_VERSION, EVIDENCE_FORMAT_VERSION, build_id, count,
                                 digest)
            connection.execute(
                "INSERT INTO build_stamp VALUES (?, ?, ?, ?, ?, ?, ?)",
                [fields.store, fields.schema_version, fields.format_version, fields.build_id,
                 fields.row_count, fields.row_digest, compute_stamp(fields, secret)],
            )
            connection.execute("CHECKPOINT")
        finally:
            connection.close()
        with open(database, "rb") as handle:
            os.fsync(handle.fileno())
        os.chmod(database, 0o644)
        os.replace(database, target)
        fsync_directory(folder)
    finally:
        for leftover in temp.iterdir():
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
        temp.rmdir()
    return text_count


def _record_rows(projected: Iterable[Projected]) -> Iterator[dict[str, object]]:
    for ordinal, item in enumerate(projected):
        yield {"ordinal": ordinal, **item.record}


def _text_rows(projected: Iterable[Projected]) -> Iterator[dict[str, object]]:
    for ordinal, item in enumerate(projected):
        for position, (channel, text) in enumerate(item.texts):
            yield {"ordinal": ordinal, "position": position, "channel": channel, "body": text,
                   "folded": fold(text)}


def _write_lines(path: Path, rows: Iterable[dict[str, object]]) -> int:
    count = 0
    with open(path, "wb") as handle:
        for row in rows:
            handle.write(orjson.dumps(row) + b"\n")
            count += 1
    return count


def _load(connection: duckdb.DuckDBPyConnection, table: str, columns: tuple[str, ...], source: Path) -> None:
    # Explicit column types: nothing is sniffed, so a text that looks like a number or a date stays text.
    spec = "{" + ", ".join(f"'{name}': '{_TYPES.get(name, 'VARCHAR')}'" for name in columns) + "}"
    escaped = str(source).replace("'", "''")
    connection.execute(
        f"INSERT INTO {table} SELECT {', '.join(columns)} FROM read_json('{escaped}', "  # noqa: S608
        f"format = 'newline_delimited', columns = {spec}, maximum_object_size = 1073741824)"
    )
