"""The real CLI's run windows against the loopback fake: `--since DATE`, `--full` (and the marking of a pull
request that vanished upstream), and `--rescan-open` for a thread resolved without moving `updatedAt`."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from evidence.lake import Lake
from evidence.lake_read import iter_records
from tests.e2e.review_ingest_support import copy_project, ingest, record_files, small_corpus
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import ALICE, PUBLIC_REPOSITORY, load_fixture
from tests.support.installation import Installation


@pytest.fixture(scope="module")
def corpus() -> dict[str, Any]:
    """The small corpus with the open pull request's thread unresolved, so a test can resolve it upstream."""
    cut = small_corpus(load_fixture())
    open_pr = next(p for p in cut["repositories"][0]["pullRequests"] if p["state"] == "OPEN")
    open_pr["reviewThreads"]["nodes"][0].update(isResolved=False, isCollapsed=False, resolvedBy=None)
    return cut


def pulls(fake: FakeGitHub) -> list[dict[str, Any]]:
    return list(fake.repositories[PUBLIC_REPOSITORY.casefold()]["pullRequests"])


def stored(project: Path) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e.record["kind"], e.record["recordKey"]): e.record for e in iter_records(project) if e.record}


def only_run(result: Any) -> dict[str, Any]:
    assert result.returncode == 0, result.stderr
    (run,) = json.loads(result.stdout)["summary"]["runs"]
    return dict(run)


def test_since_covers_exactly_the_pull_requests_updated_since_that_date_whatever_the_last_run(
        installation: Installation, fake: FakeGitHub, template: Path, ingested: Path, tmp_path: Path) -> None:
    newest_first = sorted(pulls(fake), key=lambda p: p["updatedAt"], reverse=True)
    since = newest_first[2]["updatedAt"]
    fresh = copy_project(template, tmp_path / "fresh")
    result = ingest(installation, fresh, fake, "--since", since, "--json")
    run = only_run(result)
    assert run["mode"] == "since" and run["window"]["since"].startswith(since.removesuffix("Z"))
    # What it leaves out stays out of every plain ingest after it: said, with the cure, on stderr.
    assert "older ones no earlier run read stay unread" in result.stderr and "--full" in result.stderr
    assert run["pullRequests"] == 3
    numbers = {r["pullRequest"] for (kind, _), r in stored(fresh).items() if kind == "pull-request"}
    assert numbers == {p["number"] for p in newest_first[:3]}
    # On a lake whose last completed run is newer than every pull request, an incremental run reads none of
    # them; --since still re-reads the window it names (and rewrites nothing, as nothing changed).
    project = copy_project(ingested, tmp_path / "ingested")
    assert only_run(ingest(installation, project, fake, "--json"))["pullRequests"] == 0
    rerun = only_run(ingest(installation, project, fake, "--since", "2026-01-01", "--json"))
    assert rerun["pullRequests"] == len(newest_first)
    assert all(c["created"] == c["updated"] == 0 for c in rerun["counts"].values())


def test_since_with_full_is_a_usage_error_that_costs_no_request(installation: Installation, fake: FakeGitHub,
                                                                template: Path, tmp_path: Path) -> None:
    project = copy_project(template, tmp_path / "p")
    result = ingest(installation, project, fake, "--full", "--since", "2026-01-01")
    assert result.returncode == 2 and "--full and --since cannot be combined" in result.stderr
    assert fake.requests == 0


@pytest.mark.parametrize("since", ["2999-01-01", "in an hour"])
def test_since_in_the_future_is_a_usage_error_that_costs_no_request_and_names_the_clock(
        installation: Installation, fake: FakeGitHub, template: Path, tmp_path: Path, since: str) -> None:
    """It covered no pull request and moved the next plain ingest's start to this run: a typo hid history."""
    if since == "in an hour":
        since = (datetime.now(UTC) + timedelta(hours=1)).isoformat(timespec="seconds")
    project = copy_project(template, tmp_path / "p")
    result = ingest(installation, project, fake, "--since", since)
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert re.fullmatch(rf"theurian: --since {re.escape(repr(since))} is in the future \(this machine's clock says "
                        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z\): it would cover no pull request, and the next "
                        r"plain ingest would start from this run; name a moment that has passed", line), line
    assert fake.requests == 0 and not (project / ".theurian" / "review" / "runs").exists()


def test_since_a_minute_ahead_is_taken_as_clock_skew_not_refused(
        installation: Installation, fake: FakeGitHub, template: Path, tmp_path: Path) -> None:
    since = (datetime.now(UTC) + timedelta(minutes=1)).isoformat(timespec="seconds")
    run = only_run(ingest(installation, copy_project(template, tmp_path / "p"), fake, "--since", since, "--json"))
    assert run["mode"] == "since" and run["pullRequests"] == 0


def test_a_pull_request_gone_upstream_is_marked_only_by_full_and_kept_whole(
        installation: Installation, fake: FakeGitHub, ingested: Path, tmp_path: Path) -> None:
    project = copy_project(ingested, tmp_path / "p")
    repository = fake.repositories[PUBLIC_REPOSITORY.casefold()]
    gone = repository["pullRequests"].pop(0)
    before = record_files(project)
    assert only_run(ingest(installation, project, fake, "--json"))["counts"]["pull-request"]["missingUpstream"] == 0
    assert record_files(project) == before
    full = only_run(ingest(installation, project, fake, "--full", "--json"))
    assert full["mode"] == "full" and full["window"]["since"] is None
    assert full["counts"]["pull-request"]["missingUpstream"] == 1
    assert full["counts"]["pull-request"]["unchanged"] == len(repository["pullRequests"])
    record = stored(project)[("pull-request", gone["id"])]
    assert record["missingUpstreamSince"] == full["runId"] and record["title"] == gone["title"]
    changed = {path for path, data in record_files(project).items() if before[path] != data}
    assert changed == {Lake.record_path(PUBLIC_REPOSITORY, "pull-request", gone["id"])}
    again = only_run(ingest(installation, project, fake, "--full", "--json"))
    assert again["counts"]["pull-request"]["missingUpstream"] == 0
    assert stored(project)[("pull-request", gone["id"])]["missingUpstreamSince"] == full["runId"]


def test_a_thread_resolved_without_moving_updated_at_is_picked_up_only_by_rescan_open(
        installation: Installation, fake: FakeGitHub, ingested: Path, tmp_path: Path) -> None:
    project = copy_project(ingested, tmp_path / "p")
    open_pr = next(p for p in pulls(fake) if p["state"] == "OPEN" and p["reviewThreads"]["nodes"])
    thread = open_pr["reviewThreads"]["nodes"][0]
    assert stored(project)[("review-thread", thread["id"])]["state"] == "open"
    thread.update(isResolved=True, isCollapsed=True, resolvedBy=ALICE)
    incremental = only_run(ingest(installation, project, fake, "--json"))
    assert incremental["pullRequests"] == 0 and incremental["rescanOpen"] is False
    assert stored(project)[("review-thread", thread["id"])]["state"] == "open"
    rescan = only_run(ingest(installation, project, fake, "--rescan-open", "--json"))
    open_count = sum(1 for p in pulls(fake) if p["state"] == "OPEN")
    assert rescan["rescanOpen"] is True and rescan["pullRequests"] == open_count
    assert rescan["counts"]["review-thread"]["updated"] == 1
    assert sum(c["created"] + c["updated"] for c in rescan["counts"].values()) == 1
    record = stored(project)[("review-thread", thread["id"])]
    assert record["state"] == "resolved" and record["resolvedBy"]["login"] == ALICE["login"]
