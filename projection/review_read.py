"""The build's read phase: the evidence lake's record files read, checked and rendered into rows, by this process
and, for a large lake, forked children, each taking a contiguous share (`theurian.forked`).

Each file is parsed with orjson, checked against its schema (`evidence.fast_check`, through `evidence.lake_read`)
and rendered into its rows (`projection.review_rows`). A bad file is named by its project-relative path and
skipped. A forked reader's rows cross back to this process as columns, the cheapest to pickle. The build
(`projection.review_build`) decides how many processes read, and holds the cyclic collector paused
(`collector_paused`) from the lake's scan until the store is written.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from evidence.lake_listing import LakeEntry
from evidence.lake_read import read_entries
from evidence.lake_runs import LastSeen
from projection.review_rows import Projected, ProjectedColumns, from_columns, project, to_columns
from theurian.forked import map_shares, usable_cpus
from theurian.project import REVIEW_DIR

# Below this many files per process a fork costs more than the share it takes over.
MIN_FILES_PER_PROCESS: Final = 5_000


@contextmanager
def collector_paused() -> Iterator[None]:
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


def read_records(lake: Path, entries: list[LakeEntry], seen: dict[str, LastSeen], processes: int,
                 meanwhile: Callable[[], None] | None = None) -> tuple[list[Projected], list[tuple[str, str]], int]:
    """`entries` read, checked and rendered by `processes` processes: (rows, files skipped and why, processes).

    `meanwhile`: run once by this process after the first share it reads, so while its forked readers may still
    read theirs; for work that starts threads, which must not run before the forks (`theurian.forked`)."""
    parent, pending = os.getpid(), [meanwhile] if meanwhile is not None else []

    def read_one_share(share: Sequence[LakeEntry]) -> tuple[list[Projected] | ProjectedColumns,
                                                            list[tuple[str, str]]]:
        rows, bad = read_share(lake, share, seen)
        if os.getpid() != parent:  # a forked reader: its rows cross back pickled, cheapest as columns
            return to_columns(rows), bad
        if pending:  # a forked reader must not do the parent's work
            pending.pop()()
        return rows, bad

    projected: list[Projected] = []
    skipped: list[tuple[str, str]] = []
    shared = map_shares(read_one_share, _shares(entries, processes))
    for rows, bad in shared.results:
        projected += rows if isinstance(rows, list) else from_columns(rows)
        skipped += bad
    return projected, skipped, shared.processes


def default_processes(files: int, forking: bool) -> int:
    """One process per usable CPU, each with at least MIN_FILES_PER_PROCESS files; one where forking is unsafe."""
    if not forking:
        return 1
    return max(1, min(usable_cpus(), files // MIN_FILES_PER_PROCESS))


def _shares(entries: list[LakeEntry], processes: int) -> list[list[LakeEntry]]:
    """`entries` cut into `processes` contiguous runs of (nearly) equal length, none empty (at least one run)."""
    count = max(1, min(processes, len(entries)))
    size, extra = divmod(len(entries), count)
    shares, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        shares.append(entries[start:end])
        start = end
    return shares


def read_share(lake: Path, share: Sequence[LakeEntry],
               seen: dict[str, LastSeen]) -> tuple[list[Projected], list[tuple[str, str]]]:
    """Read, check and render one share of the lake's files: (the records' rows, the files skipped and why)."""
    rows: list[Projected] = []
    skipped: list[tuple[str, str]] = []
    for path, record, error, content_sha256 in read_entries(lake, share):
        if record is None:
            skipped.append((f"{REVIEW_DIR}/{path}", error or "invalid"))
            # Naming what is wrong builds jsonschema errors that refer to each other (~17 KB a file): with the
            # collector paused, only a collection of the youngest generation frees them.
            gc.collect(0)
        else:
            assert content_sha256 is not None  # read_entries hashes every record it returns
            rows.append(project(path, record, seen.get(path), content_sha256))
    return rows, skipped
