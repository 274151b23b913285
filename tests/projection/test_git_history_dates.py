"""A commit whose committer date git cannot give as a time this store can hold (negative, before year 1, after
year 9999, not a number) is skipped and counted by `theurian findings build`; the rest of the history builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from projection.findings_build import build_findings_store
from projection.findings_store import STORE_RELATIVE, FindingFilter, read_findings
from projection.git_head import head_sha
from projection.git_history import read_commits
from tests.projection.git_fixture import EM, T0, Planned, git, message, trailer, write_history

ODD_DATES = ("-1", "-62135596801", "253402300800", "99999999999999999999", "18446744073709551616", "soon")


def _commit_literally(root: Path, parent: str, committer_date: str, body: str) -> str:
    """A commit object written as raw bytes: `git commit` would refuse these dates, a clone can carry them."""
    tree = git(root, "rev-parse", f"{parent}^{{tree}}").strip()
    raw = (f"tree {tree}\nparent {parent}\nauthor A <a@example.invalid> {T0} +0000\n"
           f"committer C <c@example.invalid> {committer_date} +0000\n\n{body}")
    sha = git(root, "hash-object", "-t", "commit", "--literally", "-w", "--stdin", stdin=raw.encode()).strip()
    git(root, "update-ref", "refs/heads/main", sha)
    return sha


def _history_with(root: Path, dates: tuple[str, ...]) -> list[str]:
    [first] = write_history(root, [Planned(T0, message("dated", [trailer("security", "LOW", "kept")]))])
    shas, parent = [first], first
    for index, date in enumerate(dates):
        parent = _commit_literally(root, parent, date, message(f"odd {index}", [
            trailer("security", "HIGH", f"under an odd date {index}"),
            f"Review-Finding: security HIGH {EM} second of {index}",
            "Review-Finding: not a finding",
        ]))
        shas.append(parent)
    last = _commit_literally(root, parent, str(T0 + 50), message("dated again", [trailer("code", "LOW", "also kept")]))
    return [*shas, last]


@pytest.mark.parametrize("date", ODD_DATES)
def test_one_commit_with_an_odd_committer_date_is_skipped_and_counted_and_the_rest_builds(
    tmp_path: Path, date: str
) -> None:
    root = tmp_path / "repo"
    shas = _history_with(root, (date,))
    summary = build_findings_store(root)
    assert (summary.commits, summary.findings, summary.malformed, summary.undated) == (3, 2, 0, 1)
    assert summary.describe() == (
        f"built {STORE_RELATIVE}: 2 findings from 3 commits; 0 malformed Review-Finding lines skipped; "
        "1 commit with an unreadable committer date skipped (its 3 Review-Finding lines not read)"
    )
    served = read_findings(root, FindingFilter(), 10)
    assert [(f.commit_sha, f.finding_text) for f in served] == [(shas[2], "also kept"), (shas[0], "kept")]


def test_every_odd_date_is_counted_once_and_the_summary_says_commits(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _history_with(root, ODD_DATES)
    summary = build_findings_store(root)
    assert (summary.commits, summary.findings, summary.undated) == (len(ODD_DATES) + 2, 2, len(ODD_DATES))
    assert summary.describe().endswith(
        f"; {len(ODD_DATES)} commits with an unreadable committer date skipped "
        f"(their {3 * len(ODD_DATES)} Review-Finding lines not read)"
    )


def test_the_first_and_last_representable_seconds_are_ordinary_dates(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shas = _history_with(root, ("0", "253402300799"))
    assert [c.committed_at for c in read_commits(root, head_sha(root))] == [
        "2026-08-29T10:40:50.000000+00:00", "9999-12-31T23:59:59.000000+00:00",
        "1970-01-01T00:00:00.000000+00:00", "2026-08-29T10:40:00.000000+00:00",
    ]
    summary = build_findings_store(root)
    assert (summary.findings, summary.undated) == (6, 0)
    assert summary.describe().endswith("; 2 malformed Review-Finding lines skipped")
    assert read_findings(root, FindingFilter(), 1)[0].commit_sha == shas[2]
