"""One ingest run of one repository: window, fetch, merge into the lake page by page, and its manifest.

The manifest records the fingerprint of the salt its records are keyed by (`evidence.salt_key`); a lost salt, or
one not the lake's, is refused before the run asks GitHub anything (`evidence.content_policy.lake_salt`). The
manifest is first written after GitHub has answered the repository as public (so a refused repository
leaves no file), rewritten when the run ends, and left `running` by a killed run — which the next incremental
run ignores, so it covers the killed run's window again and converges. Pull requests `secrets = "block"` kept
out are listed in it (`ingest.withheld`) and asked for by number by every later run until they are stored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from ulid import ULID

from evidence.batch import RecordBatch
from evidence.content_policy import read_policy
from evidence.lake import Lake, PutResult, last_completed
from evidence.lake_runs import newest_manifests
from evidence.merge import PullRequestRecords, merge_pull_request, pull_requests_not_seen
from evidence.records import (
    KIND_PULL_REQUEST,
    KIND_REVIEW_SUBMISSION,
    KIND_REVIEW_THREAD,
    KINDS,
    PROVIDER_GITHUB,
    repository_folder,
)
from evidence.salt_key import SALT_FINGERPRINT_FIELD, records_key, salt_fingerprint
from ingest import mapping
from ingest.client import GitHubClient, Spend
from ingest.content_gate import ContentGate
from ingest.errors import IngestError, reading_github
from ingest.fetch import FetchedPullRequest, Fetcher, PageSizes, parse_time
from ingest.withheld import MANIFEST_FIELD, WithheldList, carried

# GitHub's updatedAt can trail the change it records; re-reading a little of the last window costs little.
INCREMENTAL_OVERLAP: Final = timedelta(minutes=10)
MODE_INCREMENTAL: Final = "incremental"
MODE_SINCE: Final = "since"
MODE_FULL: Final = "full"
# What a record of each kind is called when GitHub's answer for it cannot be stored.
_WHAT: Final = {KIND_PULL_REQUEST: "a pull request", KIND_REVIEW_SUBMISSION: "a review",
                KIND_REVIEW_THREAD: "a review thread"}


@dataclass(frozen=True)
class RunOptions:
    since: datetime | None = None
    full: bool = False
    rescan_open: bool = False
    rekey: bool = False  # take the project's salt (made if lost) as the lake's key from this run on


ProgressCallback = Callable[[dict[str, Any]], None]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def manifests_needed(lake: Lake, repository: str) -> list[dict[str, Any]]:
    """The lake's valid run manifests, oldest first, from the newest back to the newest one that records a salt
    fingerprint, this repository's newest completed run and its newest run carrying a withheld list, whichever of
    the three is oldest (all of them when one is never found). What a run asks of them — `key_of` for the salt,
    `last_completed` and `carried` of this repository's — each ask for the newest manifest that says something, so
    they answer over this list exactly as over every manifest, without reading the old runs' record lists.

    Raises:
        PathEscapeError: `.theurian/review` or its `runs` folder resolves outside the project.
    """
    folder = repository_folder(repository)
    read: list[dict[str, Any]] = []
    keyed = completed = withheld = False
    for manifest in newest_manifests(lake.project_root):
        read.append(manifest)
        keyed = keyed or records_key(manifest)
        if manifest["repositoryFolder"] == folder:
            completed = completed or manifest["status"] == "completed"
            withheld = withheld or MANIFEST_FIELD in manifest
        if keyed and completed and withheld:
            break
    read.reverse()
    return read


class RepositoryRun:
    """Ingest one repository into `lake`; `run()` returns the final manifest."""

    def __init__(self, lake: Lake, client: GitHubClient, repository: str, options: RunOptions,
                 progress: ProgressCallback | None = None, sizes: PageSizes | None = None) -> None:
        self.lake, self.client, self.options = lake, client, options
        # The client (and its spend) may serve several runs in one invocation: a run accounts for its own part.
        self._spend_at_start = replace(client.spend)
        self.fetcher = Fetcher(client, sizes)
        # Read once, newest first and no further back than the salt's check and this repository's runs need.
        manifests = manifests_needed(lake, repository)
        # Refused here, before any request or write, when the salt is lost or not the one the lake was keyed by.
        self.gate = ContentGate(read_policy(lake.project_root, rekey=options.rekey, manifests=manifests))
        self.progress = progress or (lambda _: None)
        self.repository = repository
        self.seen_pulls: set[str] = set()
        self.seen_numbers: set[int] = set()
        self.written = 0
        runs = lake.repository_runs(repository, manifests)
        self.manifest = self._new_manifest(repository, last_completed(runs))
        self.withheld = WithheldList(carried(runs), self.run_id)
        self._manifest_started = False
        self._entries_checked = 0  # `records` entries already validated by an earlier write of the manifest

    def _new_manifest(self, repository: str, last: dict[str, Any] | None) -> dict[str, Any]:
        started = datetime.now(UTC)
        mode, since = MODE_INCREMENTAL, None
        if self.options.full:
            mode = MODE_FULL
        elif self.options.since is not None:
            mode, since = MODE_SINCE, self.options.since
        elif last is not None:
            since = parse_time(last["window"]["until"]) - INCREMENTAL_OVERLAP
        zero = {"created": 0, "updated": 0, "unchanged": 0, "missingUpstream": 0}
        return {
            "formatVersion": 1, "kind": "run", "runId": str(ULID()), "provider": PROVIDER_GITHUB,
            "repository": repository, "repositoryFolder": repository_folder(repository), "mode": mode,
            "rescanOpen": self.options.rescan_open,
            "window": {"since": since.isoformat() if since else None, "until": started.isoformat()},
            "startedAt": started.isoformat(timespec="microseconds"), "finishedAt": None, "status": "running",
            "error": None, "counts": {kind: dict(zero) for kind in KINDS}, "commentsMissingUpstream": 0,
            "pullRequests": 0, "requests": 0, "graphqlPoints": 0, "retries": 0, "records": [],
            SALT_FINGERPRINT_FIELD: salt_fingerprint(self.gate.policy.salt),
        }

    @property
    def run_id(self) -> str:
        return str(self.manifest["runId"])

    def run(self) -> dict[str, Any]:
        """Run to the end and return the manifest.

        Raises:
            IngestError: the run failed; the manifest (if the repository was proven public) says so. What was
                written before the failure stays (each page is durable on its own); the next run covers it again.
        """
        self.lake.sweep_temporary_files(self.repository)
        since_text = self.manifest["window"]["since"]
        since = parse_time(since_text) if since_text else None
        try:
            self._pages(since=since, states=None)
            if self.options.rescan_open:
                self._pages(since=None, states=["OPEN"])
            if self._manifest_started:
                self._withheld_again()
            if self.options.full and self._manifest_started:
                self._mark_missing_pull_requests()
        except IngestError as exc:
            self._finish("failed", exc.message)
            raise
        self._finish("completed", None)
        return self.manifest

    def _pages(self, *, since: datetime | None, states: list[str] | None) -> None:
        for page in self.fetcher.pages(self.repository, since=since, states=states):
            if not self._manifest_started:
                self.repository = page.repository
                self.manifest["repository"] = page.repository
                self._write_manifest()
                self._manifest_started = True
            self._write_page(page.pulls, page.total_count if since is None and states is None else None)

    def _write_page(self, pulls: list[FetchedPullRequest], total: int | None) -> None:
        # The page's records are durable (one group commit) before the manifest counts them (and drops what it
        # stored from the withheld list) and before the loop asks the fetcher for the next page.
        with RecordBatch(self.lake) as batch:
            for pull in pulls:
                if pull.node["id"] not in self.seen_pulls:
                    self._store(batch, pull)
        self.withheld.commit()
        self._write_manifest()
        self.progress({"repository": self.repository, "pullRequests": self.manifest["pullRequests"],
                       "total": total, "recordsWritten": self.written, "points": self.spend().points})

    def _withheld_again(self) -> None:
        """Ask GitHub, by number, for each pull request the withheld list names that this run has not read: a
        blocked record's pull request moves no window, so nothing else would read it again."""
        numbers = [number for number in self.withheld.numbers() if number not in self.seen_numbers]
        for pulls, gone in self.fetcher.pull_requests_by_number(self.repository, numbers):
            for number in gone:
                self.withheld.gone(number)
            self._write_page(pulls, None)

    def _put(self, batch: RecordBatch, record: Mapping[str, Any]) -> PutResult | None:
        """Through the content gate (secrets, participants); a record the evidence schema refuses is GitHub's
        answer at fault, named by its kind."""
        with reading_github(_WHAT[record["kind"]]):
            return self.gate.put(batch, record)

    def _store(self, batch: RecordBatch, pull: FetchedPullRequest) -> None:
        """Map the pull request and hand it to the lake's merge; add what the merge did to the manifest."""
        before = len(self.gate.records)
        counts = merge_pull_request(batch, self._records(pull), run_id=self.run_id, put=self._put)
        self.withheld.stored(pull.node["number"], self.gate.blocked_since(before))
        for kind, outcomes in counts.outcomes.items():
            for outcome, count in outcomes.items():
                self.manifest["counts"][kind][outcome] += count
        self.manifest["commentsMissingUpstream"] += counts.comments_missing_upstream
        self.manifest["records"].extend(counts.records)
        self.written += counts.written
        self.seen_pulls.add(pull.node["id"])
        self.seen_numbers.add(pull.node["number"])
        self.manifest["pullRequests"] += 1

    def _records(self, pull: FetchedPullRequest) -> PullRequestRecords:
        """The pull request as records, each thread holding the comments GitHub answered."""
        repo, pr = self.repository, pull.node
        with reading_github("a pull request"):
            number, url = pr["number"], pr["url"]
            # The pull request's key lists come first: a listed node without an id is the pull request at fault.
            _ = [node["id"] for node in (*pull.reviews, *(t for t, _ in pull.threads))]
        reviews, threads = [], []
        for review in pull.reviews:
            with reading_github("a review"):
                reviews.append(mapping.review_record(repo, number, review))
        for thread, comments in pull.threads:
            with reading_github("a review thread's comments"):
                entries = [mapping.comment_entry(c) for c in comments]
            with reading_github("a review thread"):
                threads.append(mapping.thread_record(repo, number, url, thread, entries))
        with reading_github("a pull request"):
            record = mapping.pull_request_record(repo, pr, pull.reviews, [t for t, _ in pull.threads])
        return PullRequestRecords(record, reviews, threads)

    def _mark_missing_pull_requests(self) -> None:
        """Mark each stored pull request the pages did not answer as missing upstream — once GitHub, asked for it
        by id, says it is gone. The pages are ordered by update time, so one updated while the run read them
        moved ahead of the cursor and was never on a page; asked for, it is stored like any other."""
        for key in pull_requests_not_seen(self.lake, self.repository, self.seen_pulls):
            fetched = self.fetcher.pull_request(self.repository, key)
            with RecordBatch(self.lake) as batch:
                if fetched is not None:
                    self._store(batch, fetched)
                elif batch.mark_missing(self.repository, KIND_PULL_REQUEST, key, self.run_id):
                    self.manifest["counts"][KIND_PULL_REQUEST]["missingUpstream"] += 1
            self.withheld.commit()
            self._write_manifest()

    def spend(self) -> Spend:
        """What this run has spent so far: the client's counters now, less what they were when it started."""
        now, start = self.client.spend, self._spend_at_start
        return Spend(requests=now.requests - start.requests, points=now.points - start.points,
                     retries=now.retries - start.retries)

    def _note_spend(self) -> None:
        spend = self.spend()
        self.manifest.update(requests=spend.requests, graphqlPoints=spend.points, retries=spend.retries)

    def _write_manifest(self) -> None:
        self._note_spend()
        self.manifest["secrets"] = self.gate.report()
        self.manifest[MANIFEST_FIELD] = self.withheld.entries()
        self.lake.write_manifest(self.manifest, entries_checked=self._entries_checked)
        self._entries_checked = len(self.manifest["records"])

    def _finish(self, status: str, error: str | None) -> None:
        self.manifest.update(status=status, error=error, finishedAt=_now())
        self._note_spend()  # a run that failed before its first page still spent requests
        if self._manifest_started:
            self._write_manifest()

