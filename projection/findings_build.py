"""`theurian findings build`: the `Review-Finding:` trailers of a project's git history, into its store.

One `git log` pass over every commit reachable from HEAD, one bulk insert into a new SQLite file beside the
live one, a build stamp over the rows, then `os.replace`: a reader holding the old store is never disturbed,
and a failed build leaves the old store exactly as it was.

A trailer is text anyone with push access wrote, and review.findings serves it to every agent, so each finding's
reviewer and text meet the project's `[review] secrets` policy as a fetched record does (`evidence.redaction`):
redacted with the lake's marker (default), left out (`block`), kept and counted (`warn`), or not scanned (`off`).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evidence.content_policy import SECRETS_BLOCK, SECRETS_OFF, SECRETS_WARN, ContentPolicy, lake_salt, read_policy
from evidence.redaction import SECRET_ACTIONS, screen
from projection.build_temp import building_file, sweep_leftovers
from projection.findings_store import (
    FINDINGS_SCHEMA_VERSION,
    SCHEMA,
    STORE_KIND,
    STORE_RELATIVE,
    TRAILER_FORMAT_VERSION,
    publish_path,
)
from projection.git_head import head_sha, in_repository
from projection.git_history import Commit, read_commits
from projection.trailers import Finding, finding_lines, parse_message
from theurian.durable import publish_built_file
from theurian.installation import build_stamp_secret
from theurian.secret_scan import scan_text
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
    secrets: SecretCounts | None = None
    in_repository: bool = True  # False: outside any git repository, so no history and an empty store

    def describe(self) -> str:
        summary = (
            f"built {self.store}: {self.findings} findings from {self.commits} commits; "
            f"{self.malformed} malformed Review-Finding lines skipped"
        )
        if not self.in_repository:
            summary += "; the project is not inside a git repository: no history, so no findings"
        if self.secrets is not None and self.secrets.found:
            summary += f"; {self.secrets.describe()}"
        if self.undated == 1:
            summary += ("; 1 commit with an unreadable committer date skipped "
                        f"(its {self.undated_lines} Review-Finding lines not read)")
        elif self.undated:
            summary += (f"; {self.undated} commits with an unreadable committer date skipped "
                        f"(their {self.undated_lines} Review-Finding lines not read)")
        return summary


@dataclass
class SecretCounts:
    """What the `[review] secrets` policy did to the findings: `found` secrets in `findings` findings, each of
    which was redacted, left out (blocked) or kept as written (warned), as `policy` says; `by_type` counts them by
    type and `records` names each finding that held one, as an ingest's and a scan's account do."""

    policy: str
    found: int = 0
    findings: int = 0
    by_type: Counter[str] = field(default_factory=Counter)
    records: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """`findings build --json`'s `secrets`: the run manifest's names and meaning (docs/secrets.md) — `policy`,
        `findings` by type, and `records`, one per finding that held a secret (its commit and position, the action
        taken, each field's type and fingerprint; never a value)."""
        records = sorted(self.records, key=lambda entry: (entry["commitSha"], entry["position"]))
        return {"policy": self.policy, "findings": dict(sorted(self.by_type.items())), "records": records}

    def describe(self) -> str:
        done = {SECRETS_BLOCK: "left out", SECRETS_WARN: "kept as written"}.get(self.policy, "redacted")
        return (f"secrets (policy {self.policy}): {self.found} found in {self.findings} findings, "
                f"{'which were' if self.findings != 1 else 'which was'} {done}")


class _Screener:
    """Each finding's reviewer and text as the project's policy keeps them; the salt is read (made if there is none)
    and checked against the lake's only at a first hit, so a history with no secret reads no run manifest."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.policy: ContentPolicy = read_policy(root, make_salt=False)
        self.counts = SecretCounts(self.policy.secrets)
        self.keyed = False

    def kept(self, commit_sha: str, finding: Finding) -> tuple[str, str] | None:
        """(reviewer, text) as stored, or None when the policy leaves the finding out.

        Raises:
            SaltRefusedError: at the first secret, the salt is lost over a keyed lake or is not the lake's
                (`evidence.content_policy.lake_salt`): a marker's fingerprint would be another salt's, and one an
                operator acknowledged from it would never match the lake's.
        """
        if self.policy.secrets == SECRETS_OFF:
            return finding.reviewer, finding.text
        if not self.keyed and (scan_text(finding.reviewer) or scan_text(finding.text)):
            self.policy, self.keyed = replace(self.policy, salt=lake_salt(self.root)), True
        screened = screen({"reviewer": finding.reviewer, "findingText": finding.text}, self.policy)
        if screened.findings:
            self.counts.found += len(screened.findings)
            self.counts.findings += 1
            self.counts.by_type.update(hit.kind for hit in screened.findings)
            self.counts.records.append({
                "commitSha": commit_sha, "position": finding.position, "action": SECRET_ACTIONS[self.policy.secrets],
                "fields": [hit.entry() for hit in screened.findings],
            })
            if self.policy.secrets == SECRETS_BLOCK:
                return None
        return screened.record["reviewer"], screened.record["findingText"]


def build_findings_store(root: Path) -> BuildSummary:
    """Rebuild the findings store of the project at `root` from its git history.

    The store path is resolved (and its containment checked) before git is asked anything. The new store
    replaces the state folder's entry itself, never a link's target (`findings_store.publish_path`).

    Raises:
        PathEscapeError: `.theurian/state` or the store file resolves outside `root`.
        GitHistoryError: git cannot read the history.
        ConfigError: the installation's build-stamp secret is damaged.
        SaltRefusedError: a trailer holds a secret and the salt is lost or not the lake's (nothing is written).
    """
    target = publish_path(root)
    secret = build_stamp_secret()
    screener = _Screener(root)
    head = head_sha(root)  # the commit the store answers for; the history is read from it, not from HEAD again
    # Outside any repository there is no history, and an empty store says so: review.findings then answers "no
    # finding" where it refused naming this build, whose cure failed. Inside one, git must read it (a missing git
    # fails loudly rather than reading as no history).
    repository = in_repository(root)
    rows, counts = _rows(read_commits(root, head) if repository else iter(()), screener)
    target.parent.mkdir(parents=True, exist_ok=True)
    target = publish_path(root)  # the state folder now exists: check again that creating it escaped nowhere
    sweep_leftovers(target.parent, target.name)  # what an interrupted build before this one left behind
    build_id = new_build_id()
    _write_store(target, rows, head, build_id, secret)
    commits, malformed, undated, undated_lines = counts
    return BuildSummary(STORE_RELATIVE, commits, len(rows), malformed, build_id, undated, undated_lines,
                        screener.counts, repository)


def _rows(history: Iterable[Commit], screener: _Screener) -> tuple[list[Row], tuple[int, int, int, int]]:
    """The rows (each finding as `screener` keeps it), and (commits, malformed lines, undated commits, their
    finding lines)."""
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
        for f in parsed.findings:
            kept = screener.kept(commit.sha, f)
            if kept is not None:
                reviewer, text = kept
                rows.append((commit.sha, f.position, reviewer, f.severity, text, ascii_fold(text), committed_at,
                             None, None, None))
    rows.sort(key=lambda row: (row[0], row[1]))  # primary-key order: the order the digest is taken in
    return rows, (commits, malformed, undated, undated_lines)


def _write_store(target: Path, rows: list[Row], head: str | None, build_id: str, secret: bytes) -> None:
    digest = RowDigest()
    for row in rows:
        digest.update(row)
    digest.update((head,))  # `built_from`'s one row, digested after the findings as a reader does
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
            connection.execute("INSERT INTO built_from VALUES (?)", (head,))
            connection.execute(INSERT_STAMP_SQL, stamp_row(fields, secret))
            connection.execute("COMMIT")
        finally:
            connection.close()
        publish_built_file(temp, target)
