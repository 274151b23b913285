"""A run writes each page of pull requests durably, as one group commit, before it asks for the next page."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest

from evidence.lake import Lake
from ingest.client import GitHubClient
from ingest.fetch import PageSizes
from ingest.run import RepositoryRun, RunOptions
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PUBLIC_REPOSITORY, load_fixture

PAGE = 3


def lake_files(project: Path) -> dict[str, bytes]:
    review = project / ".theurian" / "review"
    return {str(p.relative_to(review)): p.read_bytes() for p in sorted(review.rglob("*")) if p.is_file()}


class SnapshottingFake(FakeGitHub):
    """Copies the lake each time a later page of pull requests is asked for, before answering it."""

    def __init__(self, corpus: dict[str, Any], project: Path) -> None:
        super().__init__(corpus)
        self.project = project
        self.snapshots: list[dict[str, bytes]] = []

    def answer(self, query: str, v: dict[str, Any]) -> tuple[dict[str, Any], int]:
        if "query PullRequests" in query and v.get("after"):
            self.snapshots.append(lake_files(self.project))
        return super().answer(query, v)


@pytest.fixture
def corpus() -> dict[str, Any]:
    """Eight routine pull requests: three pages of three, nothing to follow up within a page."""
    public = copy.deepcopy(load_fixture()["repositories"][0])
    public["pullRequests"] = [p for p in public["pullRequests"] if 10 <= p["number"] < 18]
    return {"repositories": [public]}


def test_each_page_is_in_place_with_its_manifest_before_the_next_page_is_requested(
        tmp_path: Path, corpus: dict[str, Any]) -> None:
    (tmp_path / ".theurian").mkdir()
    lake = Lake(tmp_path)
    fake = SnapshottingFake(corpus, tmp_path)
    with fake.running():
        client = GitHubClient(token="t", api_url=fake.url, max_wait=0)
        try:
            manifest = RepositoryRun(lake, client, PUBLIC_REPOSITORY, RunOptions(),
                                     sizes=PageSizes(pull_requests=PAGE)).run()
        finally:
            client.close()
    final = lake_files(tmp_path)
    newest_first = sorted(corpus["repositories"][0]["pullRequests"], key=lambda p: p["updatedAt"], reverse=True)
    assert manifest["pullRequests"] == len(newest_first) and len(fake.snapshots) == 2
    by_path = {r["recordPath"]: r for r in manifest["records"]}
    for pages_done, snapshot in enumerate(fake.snapshots, start=1):
        assert not any(name.endswith(".tmp") for name in snapshot)
        done = {p["number"] for p in newest_first[:pages_done * PAGE]}
        expected = {path for path in by_path if orjson.loads(final[path])["pullRequest"] in done}
        records = {name for name in snapshot if not name.startswith("runs/")}
        assert records == expected
        assert all(snapshot[name] == final[name] for name in records)
        (run_file,) = [name for name in snapshot if name.startswith("runs/")]
        assert f'"pullRequests": {len(done)}'.encode() in snapshot[run_file]

