"""The review store exported as Parquet, partitioned by repository: what another machine (DuckDB, Spark, Trino)
reads many projects' review evidence from.

    export_parquet(root, target) -> ExportSummary

The store is opened through `review_store.open_store`, so a store this installation did not build, a stale or a
damaged one is refused exactly as `review.search` refuses it, before anything is written. DuckDB's own
`COPY ... (FORMAT parquet, PARTITION_BY ...)` writes three tables under TARGET:

    records/repository_folder=sha256-<hex>/data_0.parquet   every record column of the store
    texts/repository_folder=sha256-<hex>/data_0.parquet     ordinal, record_key, position, channel, body
    vectors/repository_folder=sha256-<hex>/data_0.parquet   ordinal, record_key, vector

The partition key is the lake's own folder name for the repository (`evidence.records.repository_folder`):
`sha256-` and 64 hex digits, so it is a safe folder name on every file system, needs no escaping any engine could
read differently, and gives every spelling of one repository (GitHub matches names case-insensitively) one
partition. Each file's key-value metadata carries the store's build id (`KV_BUILD_ID`) and what a reader needs to
decode it (docs/export.md).

The export is written into a locked temp folder beside TARGET (`projection.build_temp`), every file fsynced, then
renamed to TARGET: an interrupted export leaves no half export under TARGET, and the next export sweeps the temp.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import duckdb

from projection.build_temp import building_folder, sweep_leftovers
from projection.duckdb_interrupts import interrupts_through_duckdb
from projection.errors import ReviewExportUnwritable, ReviewStoreUnavailable
from projection.review_layout import RECORD_COLUMNS, REVIEW_SCHEMA_VERSION
from projection.review_store import READ_FAULTS, open_store
from projection.review_verify import stored_model
from theurian.disk_faults import storage_condition
from theurian.durable import fsync_directory
from theurian.errors import TheurianError, UsageError
from theurian.project import THEURIAN_DIR
from theurian.project_path import duckdb_misreads
from theurian.stamp import STAMP_TABLE
from theurian.text import ASCII_LOWER, ASCII_UPPER, one_line

PARTITION_COLUMN: Final = "repository_folder"
KV_BUILD_ID: Final = "theurian.build_id"
# `evidence.records.repository_folder` in SQL: sha256 of "github:" + OWNER/NAME with only the 26 ASCII letters
# lower-cased (`fold_repository`). A test pins it to the Python function, the one owner of the fact.
_FOLDER_SQL: Final = (
    f"'sha256-' || sha256('github:' || translate(r.repository, '{ASCII_UPPER}', '{ASCII_LOWER}'))"
)
_RECORD_SELECT: Final = ", ".join(f"r.{column}" for column in RECORD_COLUMNS)
_PARTITION_SELECT: Final = f"{_FOLDER_SQL} AS {PARTITION_COLUMN}"
# What each exported table holds, in the store's own order. texts and vectors carry record_key beside the
# store-local ordinal: the key joins rows across many projects' exports, where ordinals repeat.
TABLES: Final = {
    "records": f"SELECT {_RECORD_SELECT}, {_PARTITION_SELECT} FROM s.records r ORDER BY r.ordinal",  # noqa: S608
    "texts": (f"SELECT t.ordinal, r.record_key, t.position, t.channel, t.body, {_PARTITION_SELECT} "  # noqa: S608
              "FROM s.texts t JOIN s.records r USING (ordinal) ORDER BY t.ordinal, t.position"),
    "vectors": (f"SELECT v.ordinal, r.record_key, v.vector, {_PARTITION_SELECT} "  # noqa: S608
                "FROM s.vectors v JOIN s.records r USING (ordinal) ORDER BY v.ordinal"),
}
VECTOR_ENCODING: Final = "base64 of little-endian float16"


@dataclass(frozen=True)
class ExportSummary:
    """What one export wrote: the build it came from, rows per table, and the repositories partitioned."""

    target: Path
    build_id: str
    rows: dict[str, int]
    repositories: int

    def describe(self) -> str:
        counts = ", ".join(f"{count} {table}" for table, count in self.rows.items())
        return (f"exported review store build {self.build_id} to {self.target}: {counts} "
                f"in {self.repositories} repository partitions (Parquet)")


def export_parquet(root: Path, target: Path) -> ExportSummary:
    """Export the project's verified review store to `target` as Parquet, partitioned by repository.

    Raises:
        UsageError: `target` exists and is not an empty folder, lies inside `.theurian/`, has no existing parent
            folder, or holds a character DuckDB cannot write through (each names the path).
        PathEscapeError, ReviewStoreEscapeError, ReviewStoreUnavailable: as `open_store`, before anything is
            written; ReviewStoreUnavailable also when the store cannot be read while its rows are copied.
        ReviewExportUnwritable: the target's file system refused a write (full, a quota, read-only, a file size
            limit, or any DuckDB error naming a file it was writing); nothing was published.
    """
    target = _checked_target(root, target)
    # A Ctrl-C or SIGTERM inside a DuckDB statement (the store's verification, the COPY) comes back as DuckDB's
    # "Query interrupted": it is the interrupt, not a store fault.
    with interrupts_through_duckdb():
        store = open_store(root)
        cursor = store.cursor()
        try:
            sweep_leftovers(target.parent, target.name)
            with building_folder(target.parent, target.name) as temp:
                try:
                    summary = _write(cursor, temp, target)
                except READ_FAULTS as exc:
                    raise _told_apart(exc, temp, target) from exc
                _fsync_tree(temp)
                _publish(temp, target)
        finally:
            cursor.close()
    return summary


def _told_apart(exc: Exception, temp: Path, target: Path) -> TheurianError:
    """A COPY both reads the store and writes the target: a write refused (an ordinary condition such as a full
    disk, or any DuckDB error naming a file of the export's temp folder) is the target's fault, anything else the
    store's."""
    condition = storage_condition(exc)
    if condition is None and str(temp) in str(exc):
        condition = one_line(str(exc))
    if condition is not None:
        return ReviewExportUnwritable(
            f"cannot write the export to {target}: {condition}; nothing was published there and the review store "
            "is unchanged")
    return ReviewStoreUnavailable(f"unreadable: {type(exc).__name__}")


def _checked_target(root: Path, target: Path) -> Path:
    absolute = Path(os.path.abspath(target))
    parent = absolute.parent.resolve()
    if not parent.is_dir():
        raise UsageError(f"{absolute.parent} does not exist: create the folder the export goes in first")
    resolved = parent / absolute.name
    theurian = (root / THEURIAN_DIR).resolve()
    if resolved == theurian or theurian in resolved.parents:
        raise UsageError(f"{target} is inside {THEURIAN_DIR}/, which only Theurian writes: export elsewhere")
    if duckdb_misreads(str(resolved)):
        raise UsageError(f"{target}: DuckDB cannot write through a path holding ?, a backslash or bytes not UTF-8")
    if os.path.lexists(resolved):
        if os.path.islink(resolved) or not resolved.is_dir():
            raise UsageError(f"{target} exists and is not a folder: export to a new or empty folder")
        if any(resolved.iterdir()):
            raise UsageError(f"{target} exists and is not empty: export to a new or empty folder")
    return resolved


def _write(cursor: duckdb.DuckDBPyConnection, temp: Path, target: Path) -> ExportSummary:
    row = cursor.execute(f"SELECT build_id FROM s.{STAMP_TABLE}").fetchone()  # noqa: S608 - our own names
    assert row is not None  # open_store verified exactly one stamp row
    build_id = str(row[0])
    model = stored_model(cursor, "s.")
    metadata = {KV_BUILD_ID: build_id, "theurian.store_schema_version": str(REVIEW_SCHEMA_VERSION),
                "theurian.embedding_model": "" if model is None else model.name,
                "theurian.embedding_dimension": "" if model is None else str(model.dimension),
                "theurian.embedding_weights_sha256": "" if model is None else model.weights_sha256,
                "theurian.vector_encoding": VECTOR_ENCODING}
    kv = ", ".join(f"'{key}': '{value.replace(chr(39), chr(39) * 2)}'" for key, value in metadata.items())
    rows: dict[str, int] = {}
    for table, query in TABLES.items():
        folder = temp / table
        folder.mkdir()  # a table with no rows still has its folder: the layout never depends on the data
        destination = str(folder).replace("'", "''")
        written = cursor.execute(
            f"COPY ({query}) TO '{destination}' (FORMAT parquet, PARTITION_BY ({PARTITION_COLUMN}), "
            f"OVERWRITE_OR_IGNORE true, KV_METADATA {{{kv}}})"
        ).fetchone()
        rows[table] = int(written[0]) if written is not None else 0
    partitions = cursor.execute(
        f"SELECT count(DISTINCT {_FOLDER_SQL}) FROM s.records r").fetchone()  # noqa: S608 - our own SQL
    return ExportSummary(target, build_id, rows, int(partitions[0]) if partitions is not None else 0)


def _take_the_targets_mode(temp: Path, target: Path) -> None:
    """Give the temp folder (0700, as `mkdtemp` makes it) the mode the published folder must have: the empty
    folder's it replaces (an operator's shared folder keeps its permissions, and its group when this user may
    set it), else the default the umask gives a new folder, as `mkdir` would have."""
    try:
        existing = os.stat(target)
    except FileNotFoundError:
        os.chmod(temp, 0o777 & ~_umask())
        return
    with contextlib.suppress(PermissionError):  # a group this user is not in: the mode is kept, the group not
        os.chown(temp, -1, existing.st_gid)  # first: a chown may clear the set-group-id bit the chmod sets
    os.chmod(temp, stat.S_IMODE(existing.st_mode))


def _umask() -> int:
    # The only way to read the umask is to set it: put it straight back. No thread of ours creates files here.
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def _fsync_tree(folder: Path) -> None:
    """Every file DuckDB wrote, then every folder, reaches the disk before the rename publishes them."""
    for directory, _, files in os.walk(folder, topdown=False):
        for name in files:
            fd = os.open(os.path.join(directory, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_directory(Path(directory))


def _publish(temp: Path, target: Path) -> None:
    _take_the_targets_mode(temp, target)
    try:
        os.rename(temp, target)  # replaces an empty folder; fails on a non-empty one rather than merging
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            raise UsageError(f"{target} exists and is not empty: export to a new or empty folder") from None
        raise
    fsync_directory(target.parent)
