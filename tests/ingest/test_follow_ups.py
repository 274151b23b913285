"""Follow-ups batched across a page: one request per round for every connection of the page that has more, each
alias from its own cursor, split only at the batch bounds."""

from __future__ import annotations

import copy
from typing import Any

from ingest.client import GitHubClient
from ingest.fetch import Fetcher, PageSizes
from ingest.follow_ups import BATCH_FIELDS
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PUBLIC_REPOSITORY, Builder, load_fixture, public_corpus

Node = dict[str, Any]


def _read(corpus: Node, sizes: PageSizes | None = None) -> tuple[list[Any], FakeGitHub]:
    with FakeGitHub(corpus).running() as fake:
        client = GitHubClient(token="t", api_url=fake.url, max_wait=0)
        try:
            pulls = [p for page in Fetcher(client, sizes).pages(PUBLIC_REPOSITORY, since=None) for p in page.pulls]
        finally:
            client.close()
    return pulls, fake


def test_the_follow_ups_of_a_page_take_one_request_a_round() -> None:
    """130 threads, a thread of 120 comments and 30 reviews, on one page: before, seven requests after the page
    (threads 50 at a time, comments and reviews each alone); now a round for what the page left and one for what
    the first round left."""
    public = copy.deepcopy(load_fixture()["repositories"][0])
    public["pullRequests"] = [p for p in public["pullRequests"] if p["number"] in {3, 4, 5}]
    pulls, fake = _read({"repositories": [public]})
    assert fake.requests == 3
    by_number = {p.node["number"]: p for p in pulls}
    assert len(by_number[3].threads) == 130 and len(by_number[5].reviews) == 30
    [(_, comments)] = by_number[4].threads
    assert len(comments) == 120 and len({c["id"] for c in comments}) == 120


def _threads_of_two_comments(pulls: int, threads: int) -> Node:
    b = Builder(PUBLIC_REPOSITORY, "Bnd")
    nodes = []
    for number in range(1, pulls + 1):
        pr = b.pull_request(number, number * 10, title=f"pull {number}")
        review = b.review(pr, "COMMENTED", None, number * 10)
        pr["reviews"]["nodes"] = [review]
        for t in range(threads):
            first = b.comment(pr, review, f"opened {t}", None, number * 10)
            pr["reviewThreads"]["nodes"].append(b.thread(f"f{t}.py", [first, b.comment(pr, review, "reply", None,
                                                                                        number * 10, first)]))
        nodes.append(pr)
    return public_corpus(PUBLIC_REPOSITORY, nodes)


def test_a_round_of_exactly_the_field_bound_is_one_request_and_one_more_connection_makes_two() -> None:
    sizes = PageSizes(first_threads=BATCH_FIELDS // 2, first_comments=1)
    pulls, fake = _read(_threads_of_two_comments(2, BATCH_FIELDS // 2), sizes)
    assert fake.requests == 1 + 1
    assert all(len(comments) == 2 for pull in pulls for _, comments in pull.threads)
    corpus = _threads_of_two_comments(3, BATCH_FIELDS // 2)
    corpus["repositories"][0]["pullRequests"][0]["reviewThreads"]["nodes"][1:] = []  # 1 + 100 + 100 threads
    pulls, fake = _read(corpus, sizes)
    assert sum(len(pull.threads) for pull in pulls) == BATCH_FIELDS + 1
    assert fake.requests == 1 + 2
    assert all(len(comments) == 2 for pull in pulls for _, comments in pull.threads)


def test_the_learned_sizes_follow_the_pages_read() -> None:
    corpus = _threads_of_two_comments(3, 4)
    with FakeGitHub(corpus).running() as fake:
        client = GitHubClient(token="t", api_url=fake.url, max_wait=0)
        fetcher = Fetcher(client)
        try:
            assert sum(len(page.pulls) for page in fetcher.pages(PUBLIC_REPOSITORY, since=None)) == 3
        finally:
            client.close()
    assert (fetcher.sizes.first_reviews, fetcher.sizes.first_threads, fetcher.sizes.first_comments) == (1, 4, 2)
