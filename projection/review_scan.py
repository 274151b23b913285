"""The per-record half of `theurian review build`: read, parse, check and shape every record file of the lake,
spread over one worker process per core.

Parsing, the compiled schema check and shaping a record into its rows are pure Python per record, so one process
is bound to one core; the build's target is measured against a single-process orjson parse, and a second core
legitimately halves that share. The walk (one `os.scandir` per folder) stays in the calling process and cuts the
sorted file list into contiguous chunks; each worker turns a chunk into `Shaped` records — the rows already
rendered as the JSON the build loads and digests, all but the ordinal, which only the total order decides — and
drops each parsed record at once, which keeps its memory (and its cost) near a plain parse's. Chunks come back in
submission order and the caller sorts by the total-order key, so the result is the same list whatever the number
of workers: a test builds one lake both ways and compares the stores.

Workers are forked, and only from a process running one thread: a forked child inherits the walk's inputs for
free and imports nothing (spawned workers would re-import the caller's main module and every dependency, half a
second each), and with one thread no lock can be held across the fork. Where fork is unavailable, or other
threads run (an in-process server, a test harness), the lake is shaped in this process, as is a small lake:
starting workers costs more than they save there.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Final

import orjson

from projection.review_lake import Entry, LakeFile, LastSeen, read_entry, review_root, walk
from projection.review_rows import fold, project

# (total-order key, record row rendered from its second column on, each text row from its third column on,
# the record's distinct folded words): see `review_build._write_lines` for how the ordinal completes them.
Shaped = tuple[tuple[str, int, int, str], bytes, tuple[bytes, ...], str | tuple[str, ...]]
Skipped = tuple[str, str]  # (path relative to .theurian/review/, why)

PARALLEL_FROM_FILES: Final = 4000
CHUNK_FILES: Final = 2000
_WORDS_SEPARATOR: Final = "\x00"

_worker_root: Path | None = None
_worker_seen: dict[str, LastSeen] = {}


def scan(project_root: Path, seen: dict[str, LastSeen], workers: int | None = None) -> tuple[list[Shaped],
                                                                                               list[Skipped]]:
    """Every valid record of the lake shaped (in walk order), and every file or folder skipped with why.

    `workers` None picks one process per core for a lake of `PARALLEL_FROM_FILES` files or more and this
    process otherwise; 1 always shapes here. The result does not depend on it.

    Raises:
        PathEscapeError: `.theurian/review` itself resolves outside the project root.
    """
    root = review_root(project_root)
    entries: list[Entry] = []
    skipped: list[Skipped] = []
    for found in walk(root):
        if isinstance(found, LakeFile):
            skipped.append((found.record_path, found.error or "invalid"))
        else:
            entries.append(found)
    if workers is None:
        workers = (os.cpu_count() or 1) if len(entries) >= PARALLEL_FROM_FILES else 1
    chunks = [entries[start:start + CHUNK_FILES] for start in range(0, len(entries), CHUNK_FILES)]
    shaped: list[Shaped] = []
    for chunk_shaped, chunk_skipped in _results(root, seen, chunks, workers):
        shaped += chunk_shaped
        skipped += chunk_skipped
    return shaped, skipped


def _results(root: Path, seen: dict[str, LastSeen], chunks: list[list[Entry]],
             workers: int) -> Iterator[tuple[list[Shaped], list[Skipped]]]:
    forkable = "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
    if workers <= 1 or len(chunks) <= 1 or not forkable:
        for chunk in chunks:
            yield _shape_chunk(root, seen, chunk)
        return
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(min(workers, len(chunks)), mp_context=context, initializer=_start_worker,
                             initargs=(root, seen)) as pool:
        yield from pool.map(_shape_in_worker, chunks)


def _start_worker(root: Path, seen: dict[str, LastSeen]) -> None:
    global _worker_root, _worker_seen  # noqa: PLW0603 - one worker process's fixed inputs, set once at its start
    _worker_root, _worker_seen = root, seen


def _shape_in_worker(chunk: list[Entry]) -> tuple[list[Shaped], list[Skipped]]:
    assert _worker_root is not None
    return _shape_chunk(_worker_root, _worker_seen, chunk)


def _shape_chunk(root: Path, seen: dict[str, LastSeen], chunk: Sequence[Entry]) -> tuple[list[Shaped],
                                                                                        list[Skipped]]:
    shaped: list[Shaped] = []
    skipped: list[Skipped] = []
    for entry in chunk:
        found = read_entry(root, entry)
        if found.record is None:
            skipped.append((found.record_path, found.error or "invalid"))
            continue
        item = project(found.record_path, found.record, seen.get(found.record_path))
        words: set[str] = set()
        tails = []
        for channel, text in item.texts:
            folded = fold(text)
            # str.split and q.split agree on what whitespace is: the index's soundness rests on it.
            words.update(folded.split())
            tails.append(orjson.dumps({"channel": channel, "body": text, "folded": folded})[1:] + b"\n")
        record_tail = orjson.dumps(item.record)[1:] + b"\n"
        shaped.append((item.sort_key, record_tail, tuple(tails), _pack(words)))
    return shaped, skipped


def _pack(words: set[str]) -> str | tuple[str, ...]:
    """One string crosses the process boundary far cheaper than many; a word holding the separator (NUL is not
    whitespace, so a word can) is sent as a tuple instead."""
    joined = _WORDS_SEPARATOR.join(words)
    if not words or joined.count(_WORDS_SEPARATOR) != len(words) - 1:
        return tuple(words)
    return joined


def unpack(words: str | tuple[str, ...]) -> Sequence[str]:
    """The words `_pack` packed."""
    return words.split(_WORDS_SEPARATOR) if isinstance(words, str) else words
