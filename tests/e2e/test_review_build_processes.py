"""`theurian review build --jobs N` through the real CLI: the lake read by N processes (this one and forked
children) builds the very store one process builds, reports every bad file whichever process met it, and says
how many processes read; a count out of range is refused without a traceback."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pytest

from evidence.records import repository_folder
from projection.review_store import STORE_RELATIVE
from tests.projection.review_records import pull_request, review, thread, write_lake
from tests.support.installation import Installation

REPOSITORIES = ("Acme/Alpha", "Acme/Beta")


def _lake(installation: Installation, root: Path) -> None:
    installation.new_project_in_process(root)
    records = []
    for index in range(240):
        repository, number = REPOSITORIES[index % 2], index // 6 + 1
        kind = index % 3
        if kind == 0:
            records.append(pull_request(repository, number, f"PR_{index}", title=f"Title {index} É",
                                        body=f"Body {index}"))
        elif kind == 1:
            records.append(review(repository, number, f"PRR_{index}", body=f"Review ÄB {index}"))
        else:
            records.append(thread(repository, number, f"PRRT_{index}", bodies=(f"One {index}", f"TWO {index}")))
    write_lake(root, records)
    # A bad file in every kind folder of both repositories, so each process meets some.
    for repository in REPOSITORIES:
        for kind in ("pull-request", "review-submission", "review-thread"):
            folder = root / ".theurian/review" / repository_folder(repository) / kind
            (folder / "zz_torn.0.json").write_bytes(b'{"kind": ')  # all lower case: a case mask of 0
            os.mkfifo(folder / "aa_fifo.0.json")


def _stamped_digest(root: Path) -> tuple[int, str]:
    with duckdb.connect(str(root / STORE_RELATIVE), read_only=True) as store:
        row = store.execute("SELECT row_count, row_digest FROM build_stamp").fetchone()
    assert row is not None
    return int(row[0]), str(row[1])


def test_any_number_of_processes_builds_the_store_one_process_builds(
        installation: Installation, tmp_path: Path) -> None:
    root = tmp_path / "lake"
    _lake(installation, root)
    one = installation.cli("review", "build", "--project", str(root), "--jobs", "1", check=True)
    single = _stamped_digest(root)
    # --full: every file read again by the three processes, none taken over from the store the first build made.
    three = installation.cli("review", "build", "--project", str(root), "--jobs", "3", "--full", check=True)
    assert _stamped_digest(root) == single
    assert single[0] == 240
    one_lines, three_lines = one.stdout.strip().splitlines(), three.stdout.strip().splitlines()
    assert one_lines[:-3] == three_lines[:-3]  # every skipped file, whichever process read it
    assert one_lines[-3] == "concerns: 0 recurring concerns found"
    # the second build's clustering input (the same vectors in the same order) is the first's: taken over
    assert three_lines[-3] == one_lines[-3] + " (clustering unchanged, taken over from the store it replaces)"
    assert len(one_lines) == 15 and sum("not a regular file" in line for line in one_lines) == 6
    assert three_lines[-2].startswith("embeddings: 0 made, ")  # the second build reused every vector
    assert one_lines[-1] == f"built {STORE_RELATIVE}: 240 records (400 texts); 12 invalid files skipped"
    assert three_lines[-1] == one_lines[-1] + "; read by 3 processes"
    # Nothing on stderr but where the cure of the skipped files is named (review status: each file's own).
    note = f"note: `theurian review status --project {root}` names the command that mends each skipped file\n"
    assert one.stderr == three.stderr == note


@pytest.mark.parametrize("jobs", ["8", "256"])  # 256: the bound, accepted
def test_more_processes_than_files_reads_with_one_per_file(
        installation: Installation, tmp_path: Path, jobs: str) -> None:
    root = installation.new_project_in_process(tmp_path / "small")
    write_lake(root, [pull_request("Acme/Alpha", 1, "PR_one"), pull_request("Acme/Alpha", 2, "PR_two")])
    built = installation.cli("review", "build", "--project", str(root), "--jobs", jobs, check=True)
    assert built.stdout.strip().endswith("2 records (4 texts); 0 invalid files skipped; read by 2 processes")


@pytest.mark.parametrize("jobs", ["0", "-1", "257", "two"])
def test_a_process_count_out_of_range_is_refused_before_anything_is_read(
        installation: Installation, tmp_path: Path, jobs: str) -> None:
    root = installation.new_project_in_process(tmp_path / "p")
    shutil.rmtree(root / ".theurian/state", ignore_errors=True)
    refused = installation.cli("review", "build", "--project", str(root), "--jobs", jobs)
    assert refused.returncode == 2
    assert "--jobs" in refused.stderr and "Traceback" not in refused.stderr
    assert not (root / STORE_RELATIVE).exists()
