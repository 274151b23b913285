"""`theurian findings build`: the `Review-Finding:` trailers of a project's git history, into its store.

One `git log` pass over every commit reachable from HEAD, one bulk insert into a new SQLite file beside the
live one, a build stamp over the rows, then `os.replace`: a reader holding the old store is never disturbed,
and a failed build leaves the old store exactly as it was.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from projection.build_temp import building_file, sweep_leftovers
from projection.findings_store import (
    FINDINGS_SCHEMA_VERSION,
    SCHEMA,
    STORE_KIND,
    STORE_RELATIVE,
    TRAILER_FORMAT_VERSION,
    publish_path,
)
from projection.git_history import Commit, read_commits
from projection.trailers import finding_lines, parse_message
from theurian.durable import publish_built_file
from theurian.installation import build_stamp_secret
from theurian.stamp import INSERT_STAMP_SQL, RowDigest, StampFields, new_build_id, stamp_row
from theurian.text import ascii_fold

Row = tuple[str, int, str, str, str, str, str, None, None, None]


@dataclass(frozen=True)
class BuildSummary:
    """What a build read and wrote; `malformed` counts skipped `Review-Finding:` lines; `undated` counts commits
    skipped whole because git gives no readable committer date for them, and `undated_lines` their
    `Review-Finding:` lines, which were not read."""

    store: str  # project-relative
    commits: int
    findings: int
    malformed: int
    build_id: str
    undated: int = 0
    undated_lines: int = 0

    def describe(self) -> str:
        summary = (
            f"built {self.store}: {self.findings} findings from {self.commits} commits; "
            f"{self.malformed} malformed Review-Finding lines skipped"
        )
        if self.undated == 1:
            summary += ("; 1 commit with an unreadable committer date skipped "
                        f"(its {self.undated_lines} Review-Finding lines not read)")
        elif self.undated:
            summary += (f"; {self.undated} commits with an unreadable committer date skipped "
                        f"(their {self.undated_lines} Review-Finding lines not read)")
        return summary


def build_findings_store(root: Path) -> BuildSummary:
    """Rebuild the findings store of the project at `root` from its git history.

    The store path is resolved (and its containment checked) before git is asked anything. The new store
    replaces the state folder's entry itself, never a link's target (`findings_store.publish_path`).

    Raises:
        PathEscapeError: `.theurian/state` or the store file resolves outside `root`.
        GitHistoryError: git cannot read the history.
        ConfigError: the installation's build-stamp secret is damaged.
    """
    target = publish_path(root)
    secret = build_stamp_secret()
    rows, counts = _rows(read_commits(root))
    target.parent.mkdir(parents=True, exist_ok=True)
    target = publish_path(root)  # the state folder now exists: check again that creating it escaped nowhere
    sweep_leftovers(target.parent, target.name)  # what an interrupted build before this one left behind
    build_id = new_build_id()
    _write_store(target, rows, build_id, secret)
    commits, malformed, undated, undated_lines = counts
    return BuildSummary(STORE_RELATIVE, commits, len(rows), malformed, build_id, undated, undated_lines)


def _rows(history: Iterable[Commit]) -> tuple[list[Row], tuple[int, int, int, int]]:
    """The rows, and (commits, malformed lines, undated commits, their finding lines)."""
    rows: list[Row] = []
    commits = malformed = undated = undated_lines = 0
    for commit in history:
        commits += 1
        committed_at = commit.committed_at
        if committed_at is None:
            # committedAt is served and orders every page: a finding without one cannot be placed, so its
            # commit is counted rather than stored under an invented time.
            undated += 1
            undated_lines += sum(1 for _ in finding_lines(commit.message))
            continue
        parsed = parse_message(commit.message)
        malformed += parsed.malformed
        rows.extend(
            (commit.sha, f.position, f.reviewer, f.severity, f.text, ascii_fold(f.text), committed_at,
             None, None, None)
            for f in parsed.findings
        )
    rows.sort(key=lambda row: (row[0], row[1]))  # primary-key order: the order the digest is taken in
    return rows, (commits, malformed, undated, undated_lines)


def _write_store(target: Path, rows: list[Row], build_id: str, secret: bytes) -> None:
    digest = RowDigest()
    for row in rows:
        digest.update(row)
    fields = StampFields(STORE_KIND, FINDINGS_SCHEMA_VERSION, TRAILER_FORMAT_VERSION, build_id, len(rows),
                         digest.hexdigest())
    with building_file(target.parent, target.name) as temp:
        connection = sqlite3.connect(temp, isolation_level=None)
        try:
            # A half-built temp file is deleted, never repaired, so it needs no journal; one fsync at the end.
            connection.execute("PRAGMA journal_mode = OFF")
            connection.execute("PRAGMA synchronous = OFF")
            connection.executescript(SCHEMA)
            connection.execute("BEGIN")
            connection.executemany("INSERT INTO findings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            connection.execute(INSERT_STAMP_SQL, stamp_row(fields, secret))
            connection.execute("COMMIT")
        finally:
            connection.close()
        publish_built_file(temp, target)
