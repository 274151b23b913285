"""The real CLI ingests the fixture corpus from the loopback fake GitHub."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from evidence.lake import Lake
from evidence.lake_read import iter_records
from evidence.records import derive_thread_state
from ingest import allowlist
from tests.e2e.review_ingest_support import (
    TOKEN,
    copy_project,
    ingest,
    new_project,
    record_files,
    small_corpus,
)
from tests.support.cli_app import invoke
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PRIVATE_REPOSITORY, PUBLIC_REPOSITORY, load_fixture
from tests.support.installation import Installation


@pytest.fixture(scope="module")
def corpus() -> dict[str, Any]:
    return load_fixture()


@pytest.fixture(scope="module")
def ingested(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory,
             corpus: dict[str, Any]) -> Iterator[tuple[Path, FakeGitHub, Any]]:
    """One project with the public fixture repository ingested once, allowlisted in lower case."""
    with FakeGitHub(corpus).running() as fake:
        project = new_project(module_installation, tmp_path_factory.mktemp("ingested"), "acme/widgets")
        result = ingest(module_installation, project, fake, "--json")
        assert result.returncode == 0, result.stderr
        yield project, fake, result


@pytest.fixture(scope="module")
def template(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with Acme/Widgets allowlisted (`new_project`), never ingested: tests copy it."""
    return new_project(module_installation, tmp_path_factory.mktemp("template") / "p", "Acme/Widgets")


@pytest.fixture(scope="module")
def small_ingested(template: Path, module_installation: Installation, tmp_path_factory: pytest.TempPathFactory,
                   corpus: dict[str, Any]) -> Path:
    """The template after one ingest of the small corpus: a test that needs such a lake copies it."""
    project = copy_project(template, tmp_path_factory.mktemp("small-ingested") / "p")
    with FakeGitHub(small_corpus(corpus)).running() as fake:
        assert ingest(module_installation, project, fake).returncode == 0
    return project


@pytest.fixture
def fake(corpus: dict[str, Any]) -> Iterator[FakeGitHub]:
    """The fixture corpus cut to a few pull requests (the hard cases stay): each CLI run costs fsyncs."""
    with FakeGitHub(small_corpus(corpus)).running() as running:
        yield running


def records(project: Path) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e.record["kind"], e.record["recordKey"]): e.record for e in iter_records(project) if e.record}


def expected_state(thread: dict[str, Any]) -> str:
    comments = thread["comments"]["nodes"]
    first = min(comments, key=lambda c: (c["createdAt"], c["id"]))
    return derive_thread_state(is_resolved=thread["isResolved"], is_outdated=thread["isOutdated"],
                               first_review_state=first["pullRequestReview"]["state"])


def test_every_pull_request_review_thread_and_comment_lands_with_the_right_state(
        ingested: tuple[Path, FakeGitHub, Any], corpus: dict[str, Any]) -> None:
    project, _, _ = ingested
    entries = list(iter_records(project))
    assert [e.error for e in entries if e.error] == []
    stored = records(project)
    pulls = corpus["repositories"][0]["pullRequests"]
    for pr in pulls:
        record = stored[("pull-request", pr["id"])]
        assert record["repository"] == PUBLIC_REPOSITORY
        assert record["title"] == pr["title"] and record["body"] == pr["body"]
        assert record["reviewKeys"] == [r["id"] for r in pr["reviews"]["nodes"]]
        assert record["threadKeys"] == [t["id"] for t in pr["reviewThreads"]["nodes"]]
        for review in pr["reviews"]["nodes"]:
            assert stored[("review-submission", review["id"])]["body"] == review["body"]
        for thread in pr["reviewThreads"]["nodes"]:
            got = stored[("review-thread", thread["id"])]
            want = sorted(thread["comments"]["nodes"], key=lambda c: (c["createdAt"], c["id"]))
            assert [(c["recordKey"], c["body"]) for c in got["comments"]] == [(c["id"], c["body"]) for c in want]
            assert got["state"] == expected_state(thread) and got["path"] == thread["path"]
    assert len(entries) == len(pulls) + sum(len(p["reviews"]["nodes"]) + len(p["reviewThreads"]["nodes"])
                                            for p in pulls)


def test_the_hard_cases_are_stored_whole(ingested: tuple[Path, FakeGitHub, Any]) -> None:
    project, _, _ = ingested
    stored = records(project)
    threads = [r for (kind, _), r in stored.items() if kind == "review-thread"]
    by_pr = {n: [t for t in threads if t["pullRequest"] == n] for n in (1, 2, 3, 4, 5)}
    assert len(by_pr[3]) == 130
    assert [len(t["comments"]) for t in by_pr[4]] == [120]
    assert len(stored[("pull-request", next(k for (kind, k), r in stored.items()
                                            if kind == "pull-request" and r["pullRequest"] == 5))]["reviewKeys"]) == 30
    bodies = [c["body"] for t in threads for c in t["comments"]]
    assert "x" * 70_000 in bodies
    assert any("\u202e" in b and "\x1b" in b and "\x00" in b for b in bodies)
    assert any("锁在读取之前获取 — 🔒" in b for b in bodies)
    assert {t["path"] for t in by_pr[2]} == {"docs/read me.md", "../../etc/passwd"}
    assert all(t["comments"][0]["author"] is None for t in by_pr[2] if t["path"] == "docs/read me.md")
    assert ("review-thread", "PRRT_kwDOCaseTwin") in stored and ("review-thread", "PRRT_kwDOcasetwin") in stored
    names = [p.name.casefold() for p in (project / ".theurian" / "review").rglob("*.json")]
    assert len(names) == len(set(names))
    assert {t["state"] for t in threads} == {"open", "resolved", "outdated", "dismissed"}
    assert not (project / "etc").exists()


def test_the_summary_json_and_the_manifest_account_for_the_run(ingested: tuple[Path, FakeGitHub, Any]) -> None:
    project, fake, result = ingested
    (run,) = json.loads(result.stdout)["summary"]["runs"]
    assert run["status"] == "completed" and run["repository"] == PUBLIC_REPOSITORY
    assert run["requests"] == fake.requests and run["graphqlPoints"] == fake.graphql_points
    assert run["per100PullRequests"] == {"points": round(fake.graphql_points * 100 / run["pullRequests"], 1),
                                         "requests": round(fake.requests * 100 / run["pullRequests"], 1)}
    (manifest,) = Lake(project).manifests()
    assert manifest["counts"]["review-thread"]["created"] == len(
        [k for k in records(project) if k[0] == "review-thread"])
    assert {r["recordPath"] for r in manifest["records"]} == set(record_files(project))


def test_the_token_appears_in_no_file_and_no_output(ingested: tuple[Path, FakeGitHub, Any]) -> None:
    project, fake, result = ingested
    assert TOKEN not in result.stdout + result.stderr
    for path in project.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    assert all(TOKEN in header for header in fake.authorizations)


def test_status_shows_records_by_kind_and_the_last_run(ingested: tuple[Path, FakeGitHub, Any],
                                                       module_installation: Installation) -> None:
    project, _, _ = ingested
    result = module_installation.cli("review", "status", "--json", "--project", str(project), check=True)
    (row,) = json.loads(result.stdout)["summary"]["repositories"]
    assert row["records"] == Lake(project).record_counts(PUBLIC_REPOSITORY)
    assert row["lastRun"]["status"] == "completed" and row["records"]["pull-request"] == 105


def test_a_second_run_rewrites_nothing(installation: Installation, fake: FakeGitHub, small_ingested: Path,
                                      tmp_path: Path) -> None:
    project = copy_project(small_ingested, tmp_path / "p")
    before = {p: p.stat().st_mtime_ns for p in (project / ".theurian" / "review").glob("sha256-*/*/*.json")}
    requests = fake.requests
    incremental = ingest(installation, project, fake, "--json")
    assert fake.requests - requests == 1
    # Nothing updated since the last run: no pull request read, so no rate per 100 of them to state.
    assert json.loads(incremental.stdout)["summary"]["runs"][0]["pullRequests"] == 0
    assert json.loads(incremental.stdout)["summary"]["runs"][0]["per100PullRequests"] is None
    full = ingest(installation, project, fake, "--full", "--json")
    for result in (incremental, full):
        (run,) = json.loads(result.stdout)["summary"]["runs"]
        assert all(c["created"] == c["updated"] == c["missingUpstream"] == 0 for c in run["counts"].values())
    assert json.loads(full.stdout)["summary"]["runs"][0]["counts"]["pull-request"]["unchanged"] == 6
    assert {p: p.stat().st_mtime_ns for p in before} == before


def test_an_upstream_edit_is_counted_as_updated_and_a_delete_loses_nothing(
        installation: Installation, fake: FakeGitHub, small_ingested: Path, tmp_path: Path) -> None:
    project = copy_project(small_ingested, tmp_path / "p")
    pr = fake.repositories["acme/widgets"]["pullRequests"][0]
    edited, dropped_thread = pr["reviewThreads"]["nodes"][0], pr["reviewThreads"]["nodes"].pop(1)
    edited["comments"]["nodes"][0]["body"] = "edited upstream"
    deleted_comment = edited["comments"]["nodes"].pop(1)
    pr["updatedAt"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    result = ingest(installation, project, fake, "--json")
    assert result.returncode == 0, result.stderr
    (run,) = json.loads(result.stdout)["summary"]["runs"]
    assert run["pullRequests"] == 1
    assert run["counts"]["review-thread"]["updated"] == 1 and run["counts"]["review-thread"]["missingUpstream"] == 1
    assert run["commentsMissingUpstream"] == 1
    stored = records(project)
    thread = stored[("review-thread", edited["id"])]
    assert thread["comments"][0]["body"] == "edited upstream"
    kept = next(c for c in thread["comments"] if c["recordKey"] == deleted_comment["id"])
    assert kept["body"] == deleted_comment["body"] and kept["missingUpstreamSince"] == run["runId"]
    gone = stored[("review-thread", dropped_thread["id"])]
    assert gone["missingUpstreamSince"] == run["runId"] and len(gone["comments"]) == 1


def test_a_repository_not_on_the_allowlist_costs_zero_requests(installation: Installation, fake: FakeGitHub,
                                                               template: Path, tmp_path: Path) -> None:
    project = copy_project(template, tmp_path / "p")
    result = ingest(installation, project, fake, "acme/widgets", "acme/other")
    assert result.returncode == 1 and "acme/other is not on this project's review allowlist" in result.stderr
    assert fake.requests == 0
    assert not (project / ".theurian" / "review").exists()


def test_a_private_repository_is_refused_and_nothing_of_it_is_written(
        installation: Installation, fake: FakeGitHub, template: Path, tmp_path: Path) -> None:
    project = copy_project(template, tmp_path / "p")
    # Setup through the allowlist code the CLI calls (its commands are tested elsewhere): one process fewer.
    allowlist.disallow(project, PUBLIC_REPOSITORY)
    allowlist.allow(project, PRIVATE_REPOSITORY)
    result = ingest(installation, project, fake)
    assert result.returncode == 1 and "is not public" in result.stderr
    assert fake.requests == 1
    review = project / ".theurian" / "review"
    assert not review.exists() or not any(p.is_file() for p in review.rglob("*"))


def test_no_token_is_a_clear_message_and_no_request(installation: Installation, fake: FakeGitHub, template: Path,
                                                   tmp_path: Path) -> None:
    project = copy_project(template, tmp_path / "p")
    result = installation.cli("review", "ingest", "--project", str(project), extra_env={"GITHUB_API_URL": fake.url})
    assert result.returncode == 1 and "GITHUB_TOKEN or GH_TOKEN" in result.stderr
    assert "Traceback" not in result.stderr and fake.requests == 0


def test_ingest_finds_the_project_from_a_subfolder_and_every_review_command_has_help(
        installation: Installation, tmp_path: Path) -> None:
    project = new_project(installation, tmp_path / "p")
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    assert installation.cli("review", "allow", "Acme/Widgets", cwd=sub).returncode == 0
    assert "Acme/Widgets" in installation.cli("review", "status", cwd=sub).stdout
    # In-process: the console script's own help runs are tests/e2e/test_cli_surface.py's.
    for command in ("allow", "disallow", "ingest", "status"):
        result = invoke(["review", command, "--help"])
        assert result.exit_code == 0 and "--project" in result.output, result.output
