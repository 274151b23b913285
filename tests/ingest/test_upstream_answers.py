"""What the ingest lands from answers GitHub really gives but a plain reading would mishandle: the token owner's own
draft review, a node missing a field, a page that never ends. Found by an independent audit."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from evidence.lake import Lake
from ingest import queries
from ingest.client import GitHubClient
from ingest.errors import GitHubError, RepositoryRefusedError, UpstreamShapeError
from ingest.fetch import PageSizes
from ingest.run import RepositoryRun, RunOptions
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PUBLIC_REPOSITORY, load_fixture

Node = dict[str, Any]


def _corpus(numbers: set[int]) -> Node:
    public = copy.deepcopy(load_fixture()["repositories"][0])
    public["pullRequests"] = [p for p in public["pullRequests"] if p["number"] in numbers]
    return {"repositories": [public]}


def _pull(corpus: Node, number: int) -> Node:
    pull: Node = next(p for p in corpus["repositories"][0]["pullRequests"] if p["number"] == number)
    return pull


def _ingest(root: Path, fake: FakeGitHub, sizes: PageSizes | None = None,
            options: RunOptions | None = None) -> RepositoryRun:
    (root / ".theurian").mkdir(parents=True, exist_ok=True)
    with fake.running():
        client = GitHubClient(token="t", api_url=fake.url, max_wait=0)
        run = RepositoryRun(Lake(root), client, PUBLIC_REPOSITORY, options or RunOptions(), sizes=sizes)
        try:
            run.run()
        finally:
            client.close()
    return run


def _lake_text(root: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((root / ".theurian/review").rglob("*.json")))


def _a_pull_with_a_thread(corpus: Node) -> Node:
    return next(p for p in corpus["repositories"][0]["pullRequests"] if p["reviewThreads"]["nodes"])


def test_the_token_owners_pending_review_and_its_comments_are_never_landed(tmp_path: Path) -> None:
    """GitHub shows a review not yet submitted to its author alone: it was never visible to the repository's
    audience, which is all ingestion may land."""
    corpus = _corpus({1, 2, 4})
    pull = _a_pull_with_a_thread(corpus)
    [review, *_] = pull["reviews"]["nodes"]
    draft_review = review | {"id": "PRR_kwDODraftOnly1", "state": "PENDING", "submittedAt": None,
                             "body": "DRAFT-ONLY-VISIBLE-TO-ME review body"}
    pull["reviews"]["nodes"].append(draft_review)
    thread = pull["reviewThreads"]["nodes"][0]
    [comment, *_] = thread["comments"]["nodes"]
    pending = {"id": "PRR_kwDODraftOnly1", "state": "PENDING"}
    thread["comments"]["nodes"].append(comment | {"id": "PRRC_kwDODraftReply1", "fullDatabaseId": "990001",
                                                  "body": "DRAFT-ONLY reply on a public thread",
                                                  "pullRequestReview": pending})
    pull["reviewThreads"]["nodes"].append(thread | {"id": "PRRT_kwDODraftThread1", "comments": {"nodes": [
        comment | {"id": "PRRC_kwDODraftOpener1", "fullDatabaseId": "990002", "body": "DRAFT-ONLY new thread",
                   "pullRequestReview": pending}]}})
    run = _ingest(tmp_path, FakeGitHub(corpus))
    assert run.manifest["status"] == "completed"
    landed = _lake_text(tmp_path)
    assert "DRAFT-ONLY" not in landed
    assert "PRR_kwDODraftOnly1" not in landed and "PRRT_kwDODraftThread1" not in landed
    assert comment["id"] in landed  # the submitted comments of that thread are all there


class BreaksThePage(FakeGitHub):
    """Answers every page of pull requests with `break_node` applied to the first pull request on it that has a
    thread: GitHub's schema promises what the fake's execution enforces, so the break is made to the answer."""

    def __init__(self, corpus: Node, break_node: Callable[[Node], object]) -> None:
        super().__init__(corpus)
        self.break_node = break_node

    def answer(self, query: str, v: Node) -> tuple[Node, int]:
        body, cost = super().answer(query, v)
        if "query PullRequests" in query:
            self.break_node(next(p for p in body["data"]["repository"]["pullRequests"]["nodes"]
                                 if p["reviewThreads"]["nodes"]))
        return body, cost


@pytest.mark.parametrize("break_node", [
    lambda pull: pull.pop("title"),
    lambda pull: pull.update(title=None),
    lambda pull: pull["reviewThreads"]["nodes"][0].update(originalLine=-3),
], ids=["a field missing", "a field null", "a value the evidence schema refuses"])
def test_a_node_the_ingest_cannot_store_fails_the_run_named_and_its_manifest_says_failed(
        tmp_path: Path, break_node: Callable[[Node], object]) -> None:
    """Before: KeyError/TypeError escaped as an internal fault, the manifest stayed `running` as if killed, and no
    other allowlisted repository ran."""
    with pytest.raises(UpstreamShapeError) as raised:
        _ingest(tmp_path, BreaksThePage(_corpus({1, 2, 4}), break_node))
    [manifest_file] = (tmp_path / ".theurian/review/runs").glob("*.json")
    manifest = orjson.loads(manifest_file.read_bytes())
    assert manifest["status"] == "failed" and manifest["error"] == raised.value.message


def _follow_up_connections(body: Node, v: Node, kind: str) -> list[tuple[Node, str | None, str]]:
    """(connection, the cursor it was asked from, the node id) of each aliased follow-up of `kind` in an answer."""
    return [(node[kind], v[f"after{alias[1:]}"], v[f"id{alias[1:]}"]) for alias, node in body["data"].items()
            if alias.startswith("f") and isinstance(node, dict) and kind in node]


class EndlessPages(FakeGitHub):
    """Says there is always another page, giving `cursor` (None, or the one just used) for it."""

    def __init__(self, corpus: Node, operation: str, cursor: Callable[[str | None], str | None]) -> None:
        super().__init__(corpus)
        self.operation, self.cursor = operation, cursor
        self.asked = 0  # how many times the endless connection was asked for

    def answer(self, query: str, v: Node) -> tuple[Node, int]:
        body, cost = super().answer(query, v)
        if self.operation == "PullRequests" and "query PullRequests" in query:
            self.asked += 1
            after = v.get("after")
            body["data"]["repository"]["pullRequests"]["pageInfo"] = {"hasNextPage": True,
                                                                      "endCursor": self.cursor(after)}
        elif self.operation == "comments" and f"query {queries.FOLLOW_UP_OPERATION}" in query:
            for connection, after, _ in _follow_up_connections(body, v, "comments"):
                self.asked += 1
                connection["pageInfo"] = {"hasNextPage": True, "endCursor": self.cursor(after)}
        return body, cost


@pytest.mark.parametrize("operation, cursor", [
    ("PullRequests", lambda after: None),
    ("PullRequests", lambda after: after or "cursor:1"),
    ("comments", lambda after: after),
], ids=["pull requests, no cursor", "pull requests, the same cursor", "comments, the same cursor"])
def test_a_next_page_with_no_new_cursor_stops_the_run_instead_of_asking_forever(
        tmp_path: Path, operation: str, cursor: Callable[[str | None], str | None]) -> None:
    corpus = _corpus({1, 2, 4})
    fake = EndlessPages(corpus, operation, cursor)
    sizes = PageSizes(pull_requests=1, first_comments=1, more_comments=1)
    with pytest.raises(GitHubError, match="gave no new cursor"):
        _ingest(tmp_path, fake, sizes)
    assert 1 <= fake.asked <= 2  # the first page, and at most the one the first cursor named


class RepeatsAComment(FakeGitHub):
    """Answers every follow-up page of comments with the first comment of the thread again in front, as a list
    that shifted under the cursor would."""

    def __init__(self, corpus: Node) -> None:
        super().__init__(corpus)
        self.repeated = 0

    def answer(self, query: str, v: Node) -> tuple[Node, int]:
        body, cost = super().answer(query, v)
        if f"query {queries.FOLLOW_UP_OPERATION}" in query:
            for connection, _, thread_id in _follow_up_connections(body, v, "comments"):
                first = self._nodes()[thread_id]["comments"]["nodes"][0]
                connection["nodes"].insert(0, {key: first[key] for key in connection["nodes"][0]})
                self.repeated += 1
        return body, cost


def test_a_node_github_answers_again_on_a_later_page_is_stored_once(tmp_path: Path) -> None:
    corpus = _corpus({1, 2, 4})
    thread = _a_pull_with_a_thread(corpus)["reviewThreads"]["nodes"][0]
    [comment] = thread["comments"]["nodes"][:1]
    thread["comments"]["nodes"] = [comment] + [comment | {"id": f"PRRC_kwDOMore{n}", "fullDatabaseId": f"99{n}"}
                                               for n in range(3)]
    fake = RepeatsAComment(corpus)
    _ingest(tmp_path, fake, PageSizes(first_comments=1, more_comments=1))
    [stored] = [orjson.loads(p.read_bytes()) for p in (tmp_path / ".theurian/review").glob("*/review-thread/*.json")
                if orjson.loads(p.read_bytes())["recordKey"] == thread["id"]]
    keys = [c["recordKey"] for c in stored["comments"]]
    assert fake.repeated >= 3
    assert sorted(keys) == sorted([comment["id"], "PRRC_kwDOMore0", "PRRC_kwDOMore1", "PRRC_kwDOMore2"])


class TurnsPrivate(FakeGitHub):
    """Answers the repository as private from the second page of pull requests on."""

    def answer(self, query: str, v: Node) -> tuple[Node, int]:
        body, cost = super().answer(query, v)
        if "query PullRequests" in query and v.get("after"):
            body["data"]["repository"].update(isPrivate=True, visibility="PRIVATE")
        return body, cost


def test_a_repository_turning_private_mid_run_says_the_pages_before_stay_written(tmp_path: Path) -> None:
    """The refusal said "nothing of it was written" while the first page was, durably."""
    with pytest.raises(RepositoryRefusedError) as raised:
        _ingest(tmp_path, TurnsPrivate(_corpus({1, 2, 4})), PageSizes(pull_requests=1))
    assert "the pages GitHub answered as public before it stay written" in raised.value.message
    assert "nothing of it was written" not in raised.value.message
    assert list((tmp_path / ".theurian/review").glob("*/pull-request/*.json"))


class EditsTheOldestMidRun(FakeGitHub):
    """When the second page of pull requests is asked for, the oldest one is edited: it moves ahead of the cursor."""

    def __init__(self, corpus: Node) -> None:
        super().__init__(corpus)
        self.edited: str | None = None

    def answer(self, query: str, v: Node) -> tuple[Node, int]:
        if "query PullRequests" in query and v.get("after") and self.edited is None:
            pulls = next(iter(self.repositories.values()))["pullRequests"]
            oldest = min(pulls, key=lambda p: p["updatedAt"])
            oldest.update(updatedAt="2099-01-01T00:00:00Z", title="edited while the run read the pages")
            self.edited = oldest["id"]
        return super().answer(query, v)


def test_a_full_run_asks_for_a_pull_request_its_pages_missed_before_calling_it_gone(tmp_path: Path) -> None:
    """Pages are in update order, so one edited mid-run was never on a page and was marked missing upstream."""
    corpus = _corpus({1, 2, 4})
    _ingest(tmp_path, FakeGitHub(corpus))
    fake = EditsTheOldestMidRun(corpus)
    (tmp_path / ".theurian").mkdir(exist_ok=True)
    with fake.running():
        client = GitHubClient(token="t", api_url=fake.url, max_wait=0)
        try:
            manifest = RepositoryRun(Lake(tmp_path), client, PUBLIC_REPOSITORY, RunOptions(full=True),
                                     sizes=PageSizes(pull_requests=1)).run()
        finally:
            client.close()
    assert fake.edited is not None
    assert manifest["counts"]["pull-request"]["missingUpstream"] == 0
    stored = Lake(tmp_path).load(PUBLIC_REPOSITORY, "pull-request", fake.edited)
    assert stored is not None and "missingUpstreamSince" not in stored
    assert stored["title"] == "edited while the run read the pages"


def test_a_stored_record_damaged_by_hand_is_never_blamed_on_github_and_is_rewritten_whole(tmp_path: Path) -> None:
    """A broad catch called a lake file missing `reviewKeys` GitHub's answer lacking a field."""
    corpus = _corpus({1, 2, 4})
    _ingest(tmp_path, FakeGitHub(corpus))
    [pull_file, *_] = sorted((tmp_path / ".theurian/review").glob("*/pull-request/*.json"))
    stored = orjson.loads(pull_file.read_bytes())
    damaged = {key: value for key, value in stored.items() if key != "reviewKeys"}
    pull_file.write_bytes(orjson.dumps(damaged))
    run = _ingest(tmp_path, FakeGitHub(corpus), options=RunOptions(full=True))  # the pull request read again
    assert run.manifest["status"] == "completed"
    assert orjson.loads(pull_file.read_bytes())["reviewKeys"] == stored["reviewKeys"]
