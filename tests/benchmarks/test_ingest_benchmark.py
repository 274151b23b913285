"""Ingest benchmark (not a timed test; run with `-m benchmark -s`): 1,000 generated pull requests from the
loopback fake, figures per 100 pull requests, wall time against injected latency, and a no-change re-run; and
one page of records written one at a time against one group commit."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from evidence.batch import RecordBatch
from evidence.lake import Lake
from ingest.client import GitHubClient
from ingest.run import RepositoryRun, RunOptions
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import generated

PULL_REQUESTS = 1000
LATENCY_SECONDS = 0.05
REPOSITORY = "bench/typical"


@pytest.mark.benchmark
def test_ingest_figures_per_hundred_pull_requests(tmp_path: Path) -> None:
    (tmp_path / ".theurian").mkdir()
    lake = Lake(tmp_path)
    with FakeGitHub(generated(PULL_REQUESTS, repository=REPOSITORY), latency=LATENCY_SECONDS).running() as fake:
        client = GitHubClient(token="bench", api_url=fake.url, max_wait=0)
        started = time.perf_counter()
        first = RepositoryRun(lake, client, REPOSITORY, RunOptions()).run()
        elapsed = time.perf_counter() - started
        requests, points = fake.requests, fake.graphql_points
        started = time.perf_counter()
        again = RepositoryRun(lake, client, REPOSITORY, RunOptions()).run()
        rerun_elapsed = time.perf_counter() - started
        client.close()
    per100 = 100 / PULL_REQUESTS
    print(f"\n{PULL_REQUESTS} pull requests, {sum(c['created'] for c in first['counts'].values())} records")
    print(f"requests per 100 PRs: {requests * per100:.1f}; GraphQL points per 100 PRs: {points * per100:.1f}")
    print(f"wall time {elapsed:.1f} s with {LATENCY_SECONDS * 1000:.0f} ms injected latency per request "
          f"({requests * LATENCY_SECONDS:.1f} s of it latency)")
    written = sum(c["created"] + c["updated"] for c in again["counts"].values())
    print(f"re-run, nothing changed: {fake.requests - requests} requests, {fake.graphql_points - points} points, "
          f"{rerun_elapsed:.2f} s, records written {written}")
    assert first["pullRequests"] == PULL_REQUESTS
    assert all(c["created"] == c["updated"] == 0 for c in again["counts"].values())


SAMPLE_LAKE = Path(__file__).resolve().parents[2] / "fixtures" / "evidence"
PAGE_RECORDS = 370  # a typical page: 100 pull requests with their reviews and threads


def _page_records(tag: str) -> list[dict[str, Any]]:
    """PAGE_RECORDS review records made from the sample lake's, the body naming the round."""
    base = orjson.loads(next(iter(sorted(SAMPLE_LAKE.glob("sha256-*/review-submission/*.json")))).read_bytes())
    return [base | {"recordKey": f"PRR_bench{i:05d}", "body": f"{tag} review {i} " + "word " * 40}
            for i in range(PAGE_RECORDS)]


@pytest.mark.benchmark
def test_one_page_written_one_record_at_a_time_against_one_group_commit(tmp_path: Path) -> None:
    figures = {}
    for name in ("one at a time", "group commit"):
        project = tmp_path / name.replace(" ", "-")
        (project / ".theurian").mkdir(parents=True)
        lake = Lake(project)
        lake.put(_page_records("warm")[0])  # the folders exist, as they do after a repository's first page
        records = _page_records(name)
        started = time.perf_counter()
        if name == "one at a time":
            for record in records:
                lake.put(record)
        else:
            with RecordBatch(lake) as batch:
                for record in records:
                    batch.put(record)
        figures[name] = time.perf_counter() - started
        assert len(lake.record_keys(records[0]["repository"], "review-submission")) == PAGE_RECORDS
    for name, seconds in figures.items():
        print(f"\n{PAGE_RECORDS} records, {name}: {seconds * 1000:.0f} ms "
              f"({seconds / PAGE_RECORDS * 1000:.2f} ms a record)")
