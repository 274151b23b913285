"""Printed figures for the build's read phase (not run by default: `make benchmark`), each against its baseline in
the same process: every file of a generated lake read and checked in batches (`read_entries`, what a build does)
against one file at a time (`read_entry`), and the whole of a one-process read phase (`review_read.read_share`:
read, check, render) beside an orjson parse of the same files. Nothing here asserts a time; the figures go to
docs/review-search.md ("Reading in batches"). REVIEW_BENCHMARK_RECORDS sets the lake's size (default 100,000).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from evidence.lake_listing import scan_records
from evidence.lake_read import read_entries, read_entry
from projection.review_read import read_share
from tests.benchmarks.test_review_search_benchmark import RECORDS, generated_project
from theurian.project import REVIEW_DIR

_RUNS = 3


def _best(action: Callable[[], object]) -> float:
    """The least CPU time of _RUNS runs, in seconds, the collector paused as a build pauses it (CPU time, not wall:
    the machine is shared, and this is one thread)."""
    samples = []
    for _ in range(_RUNS):
        gc.collect()
        gc.disable()
        try:
            started = time.process_time()
            action()
            samples.append(time.process_time() - started)
        finally:
            gc.enable()
    return min(samples)


@pytest.mark.benchmark
def test_lake_read_figures(tmp_path: Path) -> None:
    root, files = generated_project(tmp_path)
    lake = root / REVIEW_DIR
    entries, _ = scan_records(root, identities=True)
    assert list(read_entries(lake, entries)) == [read_entry(lake, entry) for entry in entries]
    batched = _best(lambda: list(read_entries(lake, entries)))
    alone = _best(lambda: [read_entry(lake, entry) for entry in entries])
    whole = _best(lambda: read_share(lake, entries, {}))
    parse = _best(lambda: [orjson.loads(path.read_bytes()) for path in files])
    count = len(entries)
    print(f"\nreading {count} files in one process (CPU seconds, best of {_RUNS})")
    print(f"  read and checked in batches {batched:6.3f} s ({batched / count * 1e6:5.1f} us a file);  one at a time "
          f"{alone:6.3f} s ({alone / count * 1e6:5.1f} us);  {alone / batched:4.2f} x")
    print(f"  read, checked and rendered (the read phase) {whole:6.3f} s ({whole / count * 1e6:5.1f} us a file);  "
          f"orjson parse {parse:6.3f} s;  {whole / parse:4.2f} x the parse")
    print(f"  (lake of {RECORDS} generated records)")
