"""How long `theurian findings build` takes over 50,000 commits (printed; nothing is asserted on time)."""

import time
from pathlib import Path

import pytest

from projection.findings_build import build_findings_store
from projection.findings_store import FindingFilter, read_findings
from tests.projection.git_fixture import T0, Planned, message, trailer, write_history

COMMITS = 50_000


def _history() -> list[Planned]:
    planned = []
    for n in range(COMMITS):
        lines = [trailer("security", "HIGH", f"finding {n}: token written to the log")]
        if n % 10 == 0:
            lines += [trailer("code", "LOW", f"second finding of {n}"), "Review-Finding: malformed"]
        planned.append(Planned(T0 + n, message(f"commit {n}", lines)))
    return planned


@pytest.mark.benchmark
def test_a_50000_commit_history_builds_and_serves(tmp_path: Path) -> None:
    root = tmp_path / "big"
    started = time.perf_counter()
    write_history(root, _history())
    written = time.perf_counter()
    summary = build_findings_store(root)
    built = time.perf_counter()
    first = read_findings(root, FindingFilter(q_folded="finding 4999"), 21)
    first_read = time.perf_counter()
    again = read_findings(root, FindingFilter(q_folded="finding 4999"), 21)
    second_read = time.perf_counter()
    assert summary.commits == COMMITS and summary.findings == COMMITS + COMMITS // 10
    assert summary.malformed == COMMITS // 10 and first == again and len(first) == 11
    print(
        f"\nfast-import of {COMMITS} commits: {written - started:.2f} s"
        f"\nfindings build ({summary.findings} findings): {built - written:.2f} s"
        f"\nfirst read (verifies the row digest): {first_read - built:.3f} s"
        f"\nsecond read (digest cached per file): {second_read - first_read:.3f} s"
    )
