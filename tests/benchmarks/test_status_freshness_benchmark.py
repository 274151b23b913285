"""Printed figures for what `doctor` and `project status` spend deciding whether the review store is current with
the lake (`theurian.cli.review_freshness.lake_change_since`: a `stat` per lake folder, an `lstat` per record file),
against the record count per kind folder both commands already make, in the same process (not run by default:
`make benchmark`; the figures go to docs/daemon.md). Nothing here asserts a time.

The lake: STATUS_BENCHMARK_FILES (default 100,000) small files in one kind folder of one repository folder (the
check's cost is per file and per folder, not per byte: it never reads a record), listed warm, best of 3.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from evidence.lake import Lake
from theurian.cli.review_freshness import lake_change_since

FILES = int(os.environ.get("STATUS_BENCHMARK_FILES", "100000"))
FOLDER = "sha256-" + "1" * 64


def _best_of_three(call: Callable[[], object]) -> float:
    call()  # warm: the listing's inodes in the kernel's cache, as a second status run finds them
    times = []
    for _ in range(3):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return min(times)


@pytest.mark.benchmark
def test_print_what_the_store_freshness_check_costs_against_the_record_count(tmp_path: Path) -> None:
    kind = tmp_path / ".theurian/review" / FOLDER / "review-thread"
    kind.mkdir(parents=True)
    for number in range(FILES):
        (kind / f"PRRT_{number:08d}.json").write_bytes(b"{}")
    built = time.time_ns() + 10**9  # a store dated after every file: the whole scan runs, no change found
    assert lake_change_since(tmp_path, [FOLDER], built) is None
    counted = _best_of_three(lambda: Lake(tmp_path).folder_record_counts(FOLDER))
    checked = _best_of_three(lambda: lake_change_since(tmp_path, [FOLDER], built))
    print(f"\n{FILES} record files: record count {counted:.3f} s; freshness check {checked:.3f} s "
          f"({checked / counted:.2f}x the count; {checked / FILES * 1e6:.1f} us a file)")
