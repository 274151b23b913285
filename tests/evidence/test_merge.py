"""Merging one fetched pull request into the lake: counts, comments and records gone upstream, a gate that blocks,
and a thread whose state and source follow the merged comments."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from evidence.batch import RecordBatch
from evidence.errors import RecordInvalidError
from evidence.lake import Lake, PutResult
from evidence.merge import PullRequestRecords, merge_pull_request, pull_requests_not_seen, with_thread_comments
from evidence.records import KIND_PULL_REQUEST, KIND_REVIEW_SUBMISSION, KIND_REVIEW_THREAD, canonical_bytes
from tests.evidence.sample_lake import fixture_records

Record = dict[str, Any]
RUN_1, RUN_2 = "01K5A0000000000000000000R1", "01K5A0000000000000000000R2"


def _fetched() -> PullRequestRecords:
    """The sample lake's pull request as the ingest would hand it over."""
    by_kind: dict[str, list[Record]] = {}
    for record in fixture_records():
        by_kind.setdefault(record["kind"], []).append(record)
    [pull] = by_kind[KIND_PULL_REQUEST]
    for thread in by_kind[KIND_REVIEW_THREAD]:  # GitHub answers comments, never the lake's marks on them
        thread["comments"] = [{k: v for k, v in c.items() if k != "missingUpstreamSince"} for c in thread["comments"]]
    return PullRequestRecords(pull, by_kind[KIND_REVIEW_SUBMISSION], by_kind[KIND_REVIEW_THREAD])


def _merge(lake: Lake, records: PullRequestRecords, run_id: str = RUN_1, **kwargs: Any) -> Any:
    with RecordBatch(lake) as batch:
        return merge_pull_request(batch, records, run_id=run_id, **kwargs)


def _stored(lake: Lake, record: Mapping[str, Any]) -> Record | None:
    return lake.load(record["repository"], record["kind"], record["recordKey"])


def test_a_first_merge_creates_every_record_and_lists_them_pull_request_last(project: Path) -> None:
    lake, fetched = Lake(project), _fetched()
    counts = _merge(lake, fetched)
    assert counts.outcomes[KIND_REVIEW_SUBMISSION] == {"created": 3, "updated": 0, "unchanged": 0,
                                                       "missingUpstream": 0}
    assert counts.outcomes[KIND_REVIEW_THREAD]["created"] == 2
    assert counts.outcomes[KIND_PULL_REQUEST]["created"] == 1
    assert counts.written == 6 and counts.comments_missing_upstream == 0
    assert [e["kind"] for e in counts.records] == [KIND_REVIEW_SUBMISSION] * 3 + [KIND_REVIEW_THREAD] * 2 + [
        KIND_PULL_REQUEST]
    last = counts.records[-1]
    assert last["recordKey"] == fetched.pull_request["recordKey"]
    assert last["recordPath"] == Lake.record_path(fetched.pull_request["repository"], KIND_PULL_REQUEST,
                                                  fetched.pull_request["recordKey"])
    for record in [*fetched.reviews, *fetched.threads, fetched.pull_request]:
        assert _stored(lake, record) == record


def test_merging_the_same_pull_request_again_writes_nothing_and_counts_it_unchanged(project: Path) -> None:
    lake = Lake(project)
    _merge(lake, _fetched())
    before = {p: p.stat().st_mtime_ns for p in (project / ".theurian/review").rglob("*.json")}
    counts = _merge(lake, _fetched(), run_id=RUN_2)
    assert counts.written == 0
    assert sum(kinds["unchanged"] for kinds in counts.outcomes.values()) == 6
    assert {p: p.stat().st_mtime_ns for p in before} == before


def test_a_comment_gone_upstream_stays_marked_by_the_run_that_first_missed_it_and_is_counted_once(
        project: Path) -> None:
    lake, fetched = Lake(project), _fetched()
    _merge(lake, fetched)
    thread = fetched.threads[0]
    gone = thread["comments"][-1]
    later = copy.deepcopy(fetched)
    later.threads[0]["comments"] = thread["comments"][:-1]
    counts = _merge(lake, later, run_id=RUN_1)
    assert counts.comments_missing_upstream == 1 and counts.outcomes[KIND_REVIEW_THREAD]["updated"] == 1
    stored = _stored(lake, thread)
    assert stored is not None
    assert [c["recordKey"] for c in stored["comments"]] == [c["recordKey"] for c in thread["comments"]]
    assert stored["comments"][-1] == gone | {"missingUpstreamSince": RUN_1}
    for run_id in (RUN_1, RUN_2):  # the same run storing the pull request again, then a later run
        again = _merge(lake, later, run_id=run_id)
        assert again.comments_missing_upstream == 0 and again.written == 0


def test_a_review_and_a_thread_the_pull_request_no_longer_lists_are_marked_missing_never_erased(
        project: Path) -> None:
    lake, fetched = Lake(project), _fetched()
    _merge(lake, fetched)
    [dropped_review, *reviews], [dropped_thread, *threads] = fetched.reviews, fetched.threads
    pull = fetched.pull_request | {"reviewKeys": [r["recordKey"] for r in reviews],
                                   "threadKeys": [t["recordKey"] for t in threads]}
    counts = _merge(lake, PullRequestRecords(pull, reviews, threads), run_id=RUN_2)
    assert counts.outcomes[KIND_REVIEW_SUBMISSION]["missingUpstream"] == 1
    assert counts.outcomes[KIND_REVIEW_THREAD]["missingUpstream"] == 1
    assert _stored(lake, dropped_review) == dropped_review | {"missingUpstreamSince": RUN_2}
    assert _stored(lake, dropped_thread) == dropped_thread | {"missingUpstreamSince": RUN_2}
    # Marked records are not the pull request's own puts: the manifest lists what was staged from GitHub.
    assert dropped_review["recordKey"] not in {e["recordKey"] for e in counts.records}
    assert _merge(lake, PullRequestRecords(pull, reviews, threads), run_id=RUN_1).outcomes[
        KIND_REVIEW_SUBMISSION]["missingUpstream"] == 0  # already marked: the first mark stays


def test_a_stored_pull_request_damaged_by_hand_marks_nothing_gone_and_is_replaced_whole(project: Path) -> None:
    lake, fetched = Lake(project), _fetched()
    _merge(lake, fetched)
    path = project / ".theurian/review" / Lake.record_path(
        fetched.pull_request["repository"], KIND_PULL_REQUEST, fetched.pull_request["recordKey"])
    path.write_bytes(b'{"title": "keys cut away by hand"}')
    reviews = fetched.reviews[1:]
    counts = _merge(lake, PullRequestRecords(fetched.pull_request, reviews, fetched.threads), run_id=RUN_2)
    assert counts.outcomes[KIND_REVIEW_SUBMISSION]["missingUpstream"] == 0
    assert counts.outcomes[KIND_PULL_REQUEST]["updated"] == 1
    assert path.read_bytes() == canonical_bytes(fetched.pull_request)


def test_a_record_the_gate_blocks_is_staged_nowhere_and_counted_nowhere(project: Path) -> None:
    lake, fetched = Lake(project), _fetched()
    blocked = fetched.reviews[0]["recordKey"]

    def gate(batch: RecordBatch, record: Mapping[str, Any]) -> PutResult | None:
        return None if record["recordKey"] == blocked else batch.put(record)

    counts = _merge(lake, fetched, put=gate)
    assert counts.outcomes[KIND_REVIEW_SUBMISSION]["created"] == 2 and counts.written == 5
    assert blocked not in {e["recordKey"] for e in counts.records}
    assert _stored(lake, fetched.reviews[0]) is None


def test_a_thread_whose_comments_all_went_upstream_keeps_their_source_and_state(project: Path) -> None:
    lake, fetched = Lake(project), _fetched()
    _merge(lake, fetched)
    thread = fetched.threads[0]
    emptied = copy.deepcopy(fetched)
    # As the mapping hands over a thread GitHub answers with no comment: the pull request's URL as its source.
    emptied.threads[0] = with_thread_comments(thread | {"sourceUri": fetched.pull_request["sourceUri"]}, [])
    _merge(lake, emptied, run_id=RUN_2)
    stored = _stored(lake, thread)
    assert stored is not None
    assert stored["sourceUri"] == thread["sourceUri"] != fetched.pull_request["sourceUri"]
    assert stored["state"] == thread["state"]
    assert all(c["missingUpstreamSince"] == RUN_2 for c in stored["comments"])


def test_a_thread_opened_by_a_dismissed_review_is_dismissed_whatever_else_holds() -> None:
    [thread, _] = _fetched().threads
    first = min(thread["comments"], key=lambda c: (c["createdAt"], c["recordKey"]))
    comments = [c | {"reviewState": "DISMISSED"} if c is first else c for c in thread["comments"]]
    assert with_thread_comments(thread | {"isResolved": True}, comments)["state"] == "dismissed"
    assert with_thread_comments(thread | {"isResolved": True}, [])["state"] == "resolved"
    assert with_thread_comments(thread, list(reversed(thread["comments"])))["sourceUri"] == first["url"]


def test_a_record_the_schema_refuses_fails_the_merge_and_the_batch_leaves_the_lake_as_it_was(
        project: Path) -> None:
    lake, fetched = Lake(project), _fetched()
    broken = copy.deepcopy(fetched)
    broken.threads[1]["originalLine"] = -3
    with pytest.raises(RecordInvalidError):
        _merge(lake, broken)
    assert not list((project / ".theurian").rglob("*.json"))


def test_pull_requests_not_seen_skips_those_the_pages_answered_and_those_already_marked_gone(
        project: Path) -> None:
    lake, fetched = Lake(project), _fetched()
    _merge(lake, fetched)
    repository, key = fetched.pull_request["repository"], fetched.pull_request["recordKey"]
    assert pull_requests_not_seen(lake, repository, {key}) == []
    assert pull_requests_not_seen(lake, repository, set()) == [key]
    with RecordBatch(lake) as batch:
        assert batch.mark_missing(repository, KIND_PULL_REQUEST, key, RUN_1)
    assert pull_requests_not_seen(lake, repository, set()) == []
