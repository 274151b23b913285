"""Printed figures for the incremental `theurian review build` (not run by default: `make benchmark`): a full build
of a generated lake against an orjson parse of it (target 2.0), then a rebuild after 1 % of the record files
changed against a parse taken beside it (target 0.1), and the two stores compared; then a full build after another
1 % changed, which must redo the concern clustering the first full build takes over (its input unchanged), and the
scan's `lstat` of every file, the floor under any exact change detection. Every build is the real
command in a fresh process (`cli_build`: `theurian review build [--full] --json`), as an operator runs it, and
prints how many processes read the lake. Nothing here asserts a time; the figures go to docs/review-search.md.
REVIEW_BENCHMARK_RECORDS sets the lake's size (default 100,000); REVIEW_BENCHMARK_PROFILE=1 also prints where the
incremental rebuild's time goes (cProfile of the rebuild's process, the 30 costliest calls by cumulative time; the
profiler slows it).
"""

from __future__ import annotations

import os
import pstats
import time
from pathlib import Path

import orjson
import pytest

from evidence.lake_listing import scan_records
from evidence.records import canonical_bytes
from projection.review_layout import DIGEST_TABLES
from projection.review_store import store_path
from tests.benchmarks.test_review_search_benchmark import RECORDS, _parse_seconds, cli_build, generated_project
from tests.support.installation import Installation

CHANGED_SHARE = 100  # one record file in this many is rewritten


def _rewrite_one_in_a_hundred(files: list[Path]) -> int:
    """Rewrite every CHANGED_SHARE-th record file with other text, as an ingest would (a new file in its place)."""
    changed = 0
    for path in files[::CHANGED_SHARE]:
        record = orjson.loads(path.read_bytes())
        if record["kind"] == "review-thread":
            record["comments"][0]["body"] += " (edited)"
        else:
            record["body"] += " (edited)"
        temp = path.with_name(f".{path.name}.bench.tmp")
        temp.write_bytes(canonical_bytes(record))
        os.replace(temp, path)
        changed += 1
    return changed


def _digest(root: Path) -> tuple[object, ...]:
    import duckdb

    with duckdb.connect(":memory:") as connection:
        connection.execute(f"ATTACH '{store_path(root)}' AS s (READ_ONLY)")
        counts = tuple(connection.execute(f"SELECT count(*) FROM s.{name}").fetchone()
                       for name, _, _ in DIGEST_TABLES)
        return (*counts, connection.execute("SELECT row_count, row_digest FROM s.build_stamp").fetchone())


def _scan_seconds(root: Path) -> float:
    """The build's own scan with identities (one `lstat` a file), the least any exact change detection costs."""
    started = time.perf_counter()
    scan_records(root, identities=True)
    return time.perf_counter() - started


def _clustering(summary: dict[str, object]) -> str:
    return "taken over" if summary["clusteringReused"] else "redone"


@pytest.mark.benchmark
def test_incremental_review_build_figures(tmp_path: Path, installation: Installation) -> None:
    root, files = generated_project(tmp_path)
    # The first build embeds every record: not the figure the target is about.
    first_seconds, first = cli_build(installation, root, "--full")
    parse_seconds = _parse_seconds(files)
    full_seconds, full = cli_build(installation, root, "--full")  # every file read again, every vector reused
    changed = _rewrite_one_in_a_hundred(files)
    parse_again = _parse_seconds(files)
    profile = tmp_path / "rebuild.prof" if os.environ.get("REVIEW_BENCHMARK_PROFILE") == "1" else None
    incremental_seconds, incremental = cli_build(installation, root, profile_to=profile)
    after_incremental = _digest(root)
    scan_seconds = _scan_seconds(root)
    # A full build of the same lake: its clustering input is the rebuild's, so it takes the clustering over.
    cli_build(installation, root, "--full")
    assert _digest(root) == after_incremental  # the same rows, table by table, as a full build of the same lake
    assert incremental["recordsReused"] == full["records"] - changed
    # A full build after another change: every file read, and (its vectors changed) the clustering redone.
    _rewrite_one_in_a_hundred(files)
    parse_third = _parse_seconds(files)
    reclustered_seconds, reclustered = cli_build(installation, root, "--full")
    assert not reclustered["clusteringReused"] and reclustered["embedded"] == incremental["embedded"]
    load = os.getloadavg()
    print(f"\nreview build over {full['records']} records ({full['texts']} texts), each build "
          f"`theurian review build [--full] --json` in a fresh process (the first build, embedding every record, "
          f"{first['processes']} processes: {first_seconds:.2f} s); load average {load[0]:.2f} {load[1]:.2f}")
    print(f"  orjson parse only {parse_seconds:6.2f} s;  full build, {full['processes']} processes "
          f"{full_seconds:6.2f} s, clustering {_clustering(full)};  ratio {full_seconds / parse_seconds:4.2f} "
          "(target <= 2.0)")
    print(f"  orjson parse only {parse_again:6.2f} s;  rebuild after {changed} files ({100 / CHANGED_SHARE:.0f} %) "
          f"changed, {incremental['processes']} processes {incremental_seconds:6.2f} s "
          f"({incremental['recordsReused']} records taken over);  ratio {incremental_seconds / parse_again:4.2f} "
          f"(target <= 0.1), clustering {_clustering(incremental)}; {incremental_seconds / full_seconds:4.2f} x the "
          "full build")
    print(f"  orjson parse only {parse_third:6.2f} s;  full build after another 1 % changed, "
          f"{reclustered['processes']} processes {reclustered_seconds:6.2f} s, clustering {_clustering(reclustered)};"
          f"  ratio {reclustered_seconds / parse_third:4.2f} (target <= 2.0)")
    print(f"  seeing which files changed, the floor under any exact rebuild: the scan's lstat of every file alone "
          f"{scan_seconds:5.2f} s = {scan_seconds / parse_again:4.2f} x the parse")
    print(f"  (lake of {RECORDS} generated records; the incremental store digests as the full build's)")
    if profile is not None:
        pstats.Stats(str(profile)).sort_stats("cumulative").print_stats(30)
