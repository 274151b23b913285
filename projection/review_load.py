"""Writing a build's rows into the new store: numbered NDJSON files, digested as written, each loaded by DuckDB
as soon as it is closed.

By the time rows reach here they are rendered (`review_rows`) and sorted; what is left is putting each row's
ordinal in front, writing the lines, and DuckDB's parse-and-store, which costs more than the writing. DuckDB
releases the GIL while it works, so the loads run one at a time, in file order, on a thread of their own
(`Loader`), while this thread writes the next file: at 100,000 records the two overlap rather than add up.
Files are loaded in the order written, so each table's rows are stored in ordinal order, which the query's
ordinal-range reads rely on.

The digest is of the lines in table order, exactly as before: hashing a file's bytes is hashing its lines in
turn, so where the files are cut changes nothing a reader verifies.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor, wait
from itertools import islice
from pathlib import Path
from typing import Final

import duckdb

from projection.review_digest import LineDigest, row_line
from projection.review_layout import (
    BLOCK_COLUMNS,
    BLOCK_RECORDS,
    MODEL_COLUMNS,
    RECORD_COLUMNS,
    TEXT_COLUMNS,
    VECTOR_COLUMNS,
)
from projection.review_rows import Projected, ordinal_line
from theurian.interrupts import Interrupts

# Lines per NDJSON file. A table loads in one statement over all its files, which DuckDB reads in parallel
# (one file per thread) and stores in file order: at 200,000 text rows, four files loaded in 0.57 s where one
# statement per file took 0.85 s.
FILE_ROWS: Final = 32_768
_JOIN_ROWS: Final = 4_096  # lines joined into one write (and one digest update)
_TYPES: Final = {
    "ordinal": "BIGINT", "pull_request": "BIGINT", "lead_position": "INTEGER", "position": "INTEGER",
    "block": "BIGINT", "dimension": "INTEGER",
}


class Loader:
    """DuckDB loads of NDJSON files into `connection`, one at a time in submission order, on one thread."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, interrupts: Interrupts) -> None:
        self._connection = connection
        self._interrupts = interrupts
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="review-load")
        self._pending: list[Future[None]] = []

    def submit(self, table: str, columns: tuple[str, ...], sources: list[Path]) -> Future[None]:
        """Queue `sources` for loading into `table`, in order; raise now if an earlier load has already failed.
        Returns the load's future: done once `table` holds them (or the load failed, or was cancelled)."""
        for done in (future for future in self._pending if future.done()):
            done.result()
        future = self._pool.submit(_load, self._connection, table, columns, sources)
        self._pending.append(future)
        return future

    def finish(self) -> None:
        """Wait for every load; the first that failed raises."""
        self._pool.shutdown(wait=True)
        for future in self._pending:
            future.result()

    def abandon(self) -> None:
        """Stop: drop the queued loads, interrupt the running one, and return only once the connection is free.

        Interrupting again until the thread is idle covers a load that had not reached DuckDB at the first
        interrupt. Another Ctrl-C meanwhile is deferred (or, where it cannot be, absorbed): closing a busy
        connection would fail.
        """
        with self._interrupts.deferred():
            for future in self._pending:
                future.cancel()
            while not all(future.done() for future in self._pending):
                with contextlib.suppress(KeyboardInterrupt):
                    self._connection.interrupt()
                    wait(self._pending, timeout=0.05)
            self._pool.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def loading(connection: duckdb.DuckDBPyConnection, interrupts: Interrupts) -> Iterator[Loader]:
    """A `Loader` that has finished every load when the block ends, or abandoned them if the block (or the wait
    for the last loads) raised."""
    loader = Loader(connection, interrupts)
    try:
        yield loader
        loader.finish()
    except BaseException:
        loader.abandon()
        raise


def write_rows(folder: Path, projected: list[Projected], digest: LineDigest, loader: Loader,
               embeddings: tuple[Iterable[bytes], bytes], texts_loaded: Future[None] | None = None) -> int:
    """Number the sorted rows, write and digest every table's lines, and queue each table's load; returns how
    many text rows there are. `records` loads while the text lines are built and written. `embeddings`: the
    `vectors` lines in ordinal order and the one `embedding_model` line (`review_vectors`). `texts_loaded`: a
    future of the caller's, completed as the `texts` load ends (its failure or cancellation passed on), for work
    that reads the texts while the later tables load (`review_pairs.pairs_building`).

    Lines are made as they are written, one file's worth at a time: the rows already hold every text once, and
    a list of all the text lines would hold it all again."""
    _write_table(folder, "records", RECORD_COLUMNS,
                 (ordinal_line(ordinal, item.record_tail) for ordinal, item in enumerate(projected)), digest, loader)
    texts = _write_table(folder, "texts", TEXT_COLUMNS, _text_lines(projected), digest, loader)
    if texts_loaded is not None:
        _pass_on(texts, texts_loaded)
    _write_table(folder, "word_blocks", BLOCK_COLUMNS, _block_lines(projected), digest, loader)
    vector_lines, model_line = embeddings
    _write_table(folder, "vectors", VECTOR_COLUMNS, vector_lines, digest, loader)
    _write_table(folder, "embedding_model", MODEL_COLUMNS, [model_line], digest, loader)
    return sum(len(item.text_tails) for item in projected)


def _text_lines(projected: list[Projected]) -> Iterator[bytes]:
    """Every `texts` line in ordinal order: a record's opening (`ordinal_line` with an empty tail) rendered once for
    all its texts, each line that opening and a text's tail, which is `ordinal_line` of the tail byte for byte."""
    for ordinal, item in enumerate(projected):
        if item.text_tails:
            opening = ordinal_line(ordinal, b"")
            for tail in item.text_tails:
                yield opening + tail


def _block_lines(projected: list[Projected]) -> list[bytes]:
    """One `word_blocks` line per BLOCK_RECORDS consecutive ordinals: their distinct words, sorted, NUL-joined."""
    lines = []
    for block, start in enumerate(range(0, len(projected), BLOCK_RECORDS)):
        joined = "\x00".join(item.words for item in projected[start:start + BLOCK_RECORDS] if item.words)
        words = sorted(set(joined.split("\x00"))) if joined else []
        lines.append(row_line(BLOCK_COLUMNS, (block, "\x00".join(words))))
    return lines


def _pass_on(load: Future[None] | None, to: Future[None]) -> None:
    """`to` completed as `load` ends (at once where nothing was loaded); left alone if already done (cancelled)."""
    def finish(ended: Future[None] | None) -> None:
        with contextlib.suppress(InvalidStateError):
            if ended is None or not (ended.cancelled() or ended.exception()):
                to.set_result(None)
            elif ended.cancelled():
                to.cancel()
            else:
                to.set_exception(ended.exception() or RuntimeError("the load failed"))

    if load is None:
        finish(None)
    else:
        load.add_done_callback(finish)


def _write_table(folder: Path, table: str, columns: tuple[str, ...], lines: Iterable[bytes], digest: LineDigest,
                 loader: Loader) -> Future[None] | None:
    """`lines` as files of at most FILE_ROWS lines in `folder`, digested as written, then queued for one load
    (its future; None where there were no lines)."""
    digest.table(table)
    files: list[Path] = []
    remaining = iter(lines)
    while chunk := list(islice(remaining, FILE_ROWS)):
        path = folder / f"{table}-{len(files):05d}.ndjson"
        with open(path, "wb") as target:
            for start in range(0, len(chunk), _JOIN_ROWS):
                data = b"".join(chunk[start:start + _JOIN_ROWS])
                target.write(data)
                digest.line(data)
        files.append(path)
    return loader.submit(table, columns, files) if files else None


def _load(connection: duckdb.DuckDBPyConnection, table: str, columns: tuple[str, ...],
          sources: list[Path]) -> None:
    """A table's NDJSON files into `table`, stored in file order, then the files removed."""
    # Explicit column types: nothing is sniffed, so a text that looks like a number or a date stays text.
    spec = "{" + ", ".join(f"'{name}': '{_TYPES.get(name, 'VARCHAR')}'" for name in columns) + "}"
    files = ", ".join("'" + str(source).replace("'", "''") + "'" for source in sources)
    connection.execute(
        f"INSERT INTO {table} SELECT {', '.join(columns)} "  # noqa: S608 - our own names
        f"FROM read_json([{files}], format = 'newline_delimited', columns = {spec}, "
        f"maximum_object_size = 1073741824)"
    )
    for source in sources:
        source.unlink()
