"""`theurian review build` through the real CLI: a second build takes every unchanged record over from the store it
replaces and says so (in its summary and in `--json`); `--full` reads every file again; the stores are the same."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from projection.review_store import STORE_RELATIVE
from tests.projection.review_records import pull_request, settle, thread, write_lake
from tests.support.installation import Installation


def _stamped_digest(root: Path) -> tuple[int, str]:
    with duckdb.connect(":memory:") as connection:
        connection.execute(f"ATTACH '{root / STORE_RELATIVE}' AS s (READ_ONLY)")
        row = connection.execute("SELECT row_count, row_digest FROM s.build_stamp").fetchone()
    assert row is not None
    return int(row[0]), str(row[1])


def test_a_second_build_takes_the_unchanged_records_over_and_full_reads_them_again(
        installation: Installation, tmp_path: Path) -> None:
    root = tmp_path / "lake"
    installation.new_project_in_process(root)
    write_lake(root, [pull_request("Acme/Alpha", 1, "PR_1", body="retry the lock"),
                      thread("Acme/Alpha", 1, "PRRT_1", bodies=("the cache is stale",))])
    settle(root)
    first = installation.cli("review", "build", "--project", str(root), "--json", check=True)
    first_summary = json.loads(first.stdout)["summary"]
    assert first_summary["recordsReused"] == 0
    # the thread is embedded (a pull request is not); nothing to reuse, so the clustering ran
    reuse = ("embedded", "vectorsReused", "clusteringReused")
    assert tuple(first_summary[name] for name in reuse) == (1, 0, False)
    digest = _stamped_digest(root)
    second = installation.cli("review", "build", "--project", str(root), check=True)
    assert "records: 0 read from the lake, 2 unchanged taken over from the store it replaces" in second.stdout
    assert _stamped_digest(root) == digest
    full = installation.cli("review", "build", "--project", str(root), "--full", "--json", check=True)
    full_summary = json.loads(full.stdout)["summary"]
    assert (full_summary["recordsReused"], full_summary["records"]) == (0, 2)
    # --full reads every file again, but its vector and clustering input are unchanged: both taken over
    assert tuple(full_summary[name] for name in reuse) == (0, 1, True)
    assert full_summary["concerns"] == 0
    assert _stamped_digest(root) == digest
    assert first.stderr == second.stderr == full.stderr == ""
