"""Ingest benchmark (not a timed test; run with `-m benchmark -s`): 1,000 generated pull requests of a typical and
of a heavy-tailed corpus from the loopback fake (which charges GitHub's documented cost rule), requests and points
per 100 pull requests with learned page sizes beside the fixed 25/5/5 first pages in the same process, wall time
against injected latency, and a no-change re-run; and one page of records written one at a time against one group
commit."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from graphql import parse

from evidence.batch import RecordBatch
from evidence.lake import Lake
from ingest.client import GitHubClient
from ingest.fetch import Fetcher, PageSizes
from ingest.run import RepositoryRun, RunOptions
from tests.support.fake_github import FakeGitHub, github_schema
from tests.support.github_corpus import generated, heavy_tailed
from tests.support.github_cost import query_cost

PULL_REQUESTS = 1000
LATENCY_SECONDS = 0.05
NODE_LIMIT = 500_000  # GitHub's, per call
CORPORA = {"typical": generated, "heavy-tailed": heavy_tailed}
# The targets for the heavy-tailed corpus, per 100 pull requests.
HEAVY_POINTS_TARGET, HEAVY_REQUESTS_TARGET = 12, 5


class MeteredFake(FakeGitHub):
    """Keeps, per request, its operation and what GitHub's rule reckons of it (connection requests, nodes)."""

    def __init__(self, corpus: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(corpus, **kwargs)
        self.log: list[tuple[str, int, int]] = []

    def answer(self, query: str, v: dict[str, Any]) -> tuple[dict[str, Any], int]:
        body, cost = super().answer(query, v)
        reckoned = query_cost(github_schema(), parse(query), v)
        self.log.append((query.split("query ", 1)[1].split("(", 1)[0], reckoned.requests, reckoned.nodes))
        return body, cost


def _fixed_size_spend(corpus: dict[str, Any], repository: str) -> tuple[int, int]:
    """(requests, points) reading every page with the fixed 25/5/5 first pages (batched follow-ups too)."""
    with FakeGitHub(corpus).running() as fake:
        client = GitHubClient(token="bench", api_url=fake.url, max_wait=0)
        pulls = sum(len(page.pulls) for page in Fetcher(client, PageSizes()).pages(repository, since=None))
        client.close()
    assert pulls == PULL_REQUESTS
    return fake.requests, fake.graphql_points


@pytest.mark.benchmark
@pytest.mark.parametrize("shape", list(CORPORA))
def test_ingest_figures_per_hundred_pull_requests(tmp_path: Path, shape: str) -> None:
    repository = f"bench/{shape}"
    corpus = CORPORA[shape](PULL_REQUESTS, repository=repository)
    (tmp_path / ".theurian").mkdir()
    lake = Lake(tmp_path)
    with MeteredFake(corpus, latency=LATENCY_SECONDS).running() as fake:
        client = GitHubClient(token="bench", api_url=fake.url, max_wait=0)
        started = time.perf_counter()
        run = RepositoryRun(lake, client, repository, RunOptions())
        first = run.run()
        elapsed = time.perf_counter() - started
        requests, points = fake.requests, fake.graphql_points
        started = time.perf_counter()
        again = RepositoryRun(lake, client, repository, RunOptions()).run()
        rerun_elapsed = time.perf_counter() - started
        client.close()
    fixed_requests, fixed_points = _fixed_size_spend(corpus, repository)
    per100 = 100 / PULL_REQUESTS
    pulls = corpus["repositories"][0]["pullRequests"]
    threads = sum(len(p["reviewThreads"]["nodes"]) for p in pulls)
    print(f"\n{shape}: {PULL_REQUESTS} pull requests, {threads} threads, "
          f"{sum(c['created'] for c in first['counts'].values())} records")
    print(f"learned sizes: requests per 100 PRs {requests * per100:.1f}, GraphQL points per 100 PRs "
          f"{points * per100:.1f} (sizes at the end: {run.fetcher.sizes})")
    print(f"fixed 25/5/5 first pages, same batching: requests per 100 PRs {fixed_requests * per100:.1f}, "
          f"points {fixed_points * per100:.1f}; learned/fixed points {points / fixed_points:.2f}")
    if shape == "heavy-tailed":
        met = points * per100 <= HEAVY_POINTS_TARGET and requests * per100 <= HEAVY_REQUESTS_TARGET
        print(f"target <= {HEAVY_POINTS_TARGET} points and <= {HEAVY_REQUESTS_TARGET} requests per 100 PRs: "
              f"{'met' if met else 'MISSED'}")
    operations = Counter(operation for operation, _, _ in fake.log[:requests])
    print(f"requests by operation: {dict(operations)}; largest node count of a request "
          f"{max(nodes for _, _, nodes in fake.log):,} (GitHub's limit {NODE_LIMIT:,})")
    print(f"wall time {elapsed:.1f} s with {LATENCY_SECONDS * 1000:.0f} ms injected latency per request "
          f"({requests * LATENCY_SECONDS:.1f} s of it latency)")
    written = sum(c["created"] + c["updated"] for c in again["counts"].values())
    print(f"re-run, nothing changed: {fake.requests - requests} requests, {fake.graphql_points - points} points, "
          f"{rerun_elapsed:.2f} s, records written {written}")
    assert first["pullRequests"] == PULL_REQUESTS
    assert all(c["created"] == c["updated"] == 0 for c in again["counts"].values())
    assert max(nodes for _, _, nodes in fake.log) < NODE_LIMIT


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
