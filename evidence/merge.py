"""Merging one fetched pull request into the lake: the record format's merge rules, as one batch operation.

The ingest fetches a pull request and maps it to records (`PullRequestRecords`: each thread carrying only the
comments GitHub answered); `merge_pull_request` does the rest inside the caller's `RecordBatch`:

- each thread's comments are merged with those its stored file kept (`merge_comments`: a comment gone upstream
  stays, marked `missingUpstreamSince` the run that first missed it), and the thread's state and source are
  derived again from the merged list (`with_thread_comments`);
- reviews and threads are staged first and the pull request last (the batch renames in that order): the stored
  pull request's key lists are what a re-run compares against, so a run killed in between re-does it whole;
- a review or thread the stored pull request listed and the fetched one no longer does is marked missing
  upstream, never erased.

It returns what the run's manifest adds up (`MergeCounts`). Every record goes through the caller's `put`, the
content gate between ingest and evidence; a record the gate blocks is staged nowhere and counted nowhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from evidence.batch import RecordBatch
from evidence.lake import Lake, Outcome, PutResult
from evidence.records import (
    KIND_PULL_REQUEST,
    KIND_REVIEW_SUBMISSION,
    KIND_REVIEW_THREAD,
    KINDS,
    derive_thread_state,
    merge_comments,
)

Record = dict[str, Any]
# Stages a record in the batch (or blocks it: None); `RecordBatch.put` itself when nothing screens records.
PutRecord = Callable[[RecordBatch, Mapping[str, Any]], PutResult | None]
MISSING_UPSTREAM: Final = "missingUpstream"


def _zero_counts() -> dict[str, dict[str, int]]:
    return {kind: {**{outcome.value: 0 for outcome in Outcome}, MISSING_UPSTREAM: 0} for kind in KINDS}


@dataclass(frozen=True)
class PullRequestRecords:
    """One fetched pull request as records: the pull request, its reviews, and its threads, each thread's
    `comments` holding only the entries GitHub answered (the merge adds what the lake kept)."""

    pull_request: Record
    reviews: list[Record]
    threads: list[Record]


@dataclass
class MergeCounts:
    """What one merge did. `outcomes[kind]` counts created / updated / unchanged / missingUpstream records;
    `records` lists each staged record as a run manifest does (kind, recordKey, recordPath, sha256), in staging
    order; `written` counts the records whose bytes changed."""

    outcomes: dict[str, dict[str, int]] = field(default_factory=_zero_counts)
    comments_missing_upstream: int = 0
    records: list[dict[str, str]] = field(default_factory=list)
    written: int = 0

    def note(self, kind: str, result: PutResult) -> None:
        self.outcomes[kind][result.outcome.value] += 1
        if result.outcome is not Outcome.UNCHANGED:
            self.written += 1
        key = result.record_path.rsplit("/", 1)[1].rsplit(".", 2)[0]
        self.records.append({"kind": kind, "recordKey": key, "recordPath": result.record_path,
                             "sha256": result.sha256})


def with_thread_comments(thread: Mapping[str, Any], comments: list[Record]) -> Record:
    """The thread record holding `comments`, its `state` and `sourceUri` derived from them: the first comment
    (by createdAt, then key) names the source and whether the review that opened the thread was dismissed. With
    no comment the source stays what the record holds (the pull request's URL, as the mapping sets it)."""
    first = min(comments, key=lambda c: (c["createdAt"], c["recordKey"])) if comments else None
    state = derive_thread_state(
        is_resolved=thread["isResolved"],
        is_outdated=thread["isOutdated"],
        first_review_state=first["reviewState"] if first else None,
    )
    uri = first["url"] if first else thread["sourceUri"]
    return {**thread, "state": state, "sourceUri": uri, "comments": comments}


def merge_pull_request(batch: RecordBatch, records: PullRequestRecords, *, run_id: str,
                       put: PutRecord | None = None) -> MergeCounts:
    """Merge one pull request's records into the lake through `batch` (nothing is durable before its commit).

    Raises:
        RecordInvalidError: a record does not validate (from `put`; the batch holds what was staged before it).
        RecordKeyError: a record key cannot name a file.
    """
    put_record: PutRecord = put or RecordBatch.put
    counts = MergeCounts()
    pull = records.pull_request
    repository = pull["repository"]
    stored_pull = batch.load(repository, KIND_PULL_REQUEST, pull["recordKey"])

    def stage(kind: str, record: Record) -> None:
        result = put_record(batch, record)
        if result is not None:
            counts.note(kind, result)

    for review in records.reviews:
        stage(KIND_REVIEW_SUBMISSION, review)
    for thread in records.threads:
        stage(KIND_REVIEW_THREAD, _merge_thread(batch, thread, run_id, counts))
    if stored_pull is not None:
        # A stored file damaged by hand has no key lists to compare: nothing is marked gone from it, and the
        # pull request staged below replaces it with a whole one.
        for kind, field_name in ((KIND_REVIEW_SUBMISSION, "reviewKeys"), (KIND_REVIEW_THREAD, "threadKeys")):
            gone = set(_keys(stored_pull, field_name)) - set(_keys(pull, field_name))
            for key in sorted(gone):
                if batch.mark_missing(repository, kind, key, run_id):
                    counts.outcomes[kind][MISSING_UPSTREAM] += 1
    stage(KIND_PULL_REQUEST, pull)
    return counts


def _merge_thread(batch: RecordBatch, thread: Record, run_id: str, counts: MergeCounts) -> Record:
    stored = batch.load(thread["repository"], KIND_REVIEW_THREAD, thread["recordKey"]) or {}
    kept = stored.get("comments", [])
    merged = merge_comments(thread["comments"], kept, run_id=run_id)
    marked_before = {c["recordKey"] for c in kept if "missingUpstreamSince" in c}
    newly = {c["recordKey"] for c in merged if c.get("missingUpstreamSince") == run_id}
    counts.comments_missing_upstream += len(newly - marked_before)
    return with_thread_comments(thread, merged)


def _keys(record: Mapping[str, Any], field_name: str) -> list[str]:
    """A pull request's key list, or none when the file no longer holds one (damaged by hand)."""
    keys = record.get(field_name)
    return [key for key in keys if isinstance(key, str)] if isinstance(keys, list) else []


def pull_requests_not_seen(lake: Lake, repository: str, seen: set[str]) -> list[str]:
    """Stored pull requests a full run's pages did not answer and the lake does not already know are gone, in
    key order: each is worth asking GitHub for by id before it is marked missing upstream."""
    keys = []
    for key in sorted(set(lake.record_keys(repository, KIND_PULL_REQUEST)) - seen):
        record = lake.load(repository, KIND_PULL_REQUEST, key)
        if record is None or "missingUpstreamSince" not in record:
            keys.append(key)
    return keys
