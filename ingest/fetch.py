"""Paging: pull requests newest update first, and every nested connection of each one to its end.

Each page of pull requests carries first pages of reviews, threads and comments, sized from what the repository's
previous pages needed (ingest/page_sizes.py); every connection of the page that has more is then continued in
batched follow-ups (ingest/follow_ups.py): a round of them for the whole page is one request, or a few.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from evidence.records import fold_repository
from ingest import queries
from ingest.allowlist import without_clone_suffix
from ingest.client import GitHubClient
from ingest.errors import GitHubNotFoundError, IngestError, RepositoryRefusedError, reading_github
from ingest.follow_ups import Caps, Follow, FollowUps, each_once, next_cursor
from ingest.page_sizes import LearnedSizes, PageSizes
from theurian.times import NOT_RFC3339, parse_rfc3339

Node = dict[str, Any]

PUBLIC_VISIBILITY: Final = "PUBLIC"
# A review not yet submitted: GitHub shows it (and the comments in it) to its author alone, so the viewer's own
# draft comes back on the token owner's queries. It was never visible to the repository's audience, which is the
# whole of what ingestion may land (contract: reviewIngestionScope "public-allowlisted").
PENDING_REVIEW: Final = "PENDING"

__all__ = ["Fetcher", "FetchedPullRequest", "PageSizes", "PullRequestPage", "parse_time"]


@dataclass
class FetchedPullRequest:
    node: Node
    reviews: list[Node]
    threads: list[tuple[Node, list[Node]]] = field(default_factory=list)


@dataclass(frozen=True)
class PullRequestPage:
    repository: str
    total_count: int
    pulls: list[FetchedPullRequest]


def parse_time(value: str, what: str = "the time") -> datetime:
    """`value`, GitHub's or a run manifest's time, as an aware datetime (`theurian.times`' strict parser).

    Raises:
        IngestError: not an RFC 3339 timestamp with an explicit offset (a naive time would crash the window test).
    """
    try:
        return parse_rfc3339(value)
    except ValueError:
        raise IngestError(f"{what} {value[:40]!r} is {NOT_RFC3339}") from None


class Fetcher:
    """Reads pull requests of one repository through a GitHubClient. Lazy: a page is asked for only when
    the previous one has been consumed, so its records are written first. Without `sizes`, first-page sizes are
    learned from the pull requests read so far (LearnedSizes); with them, they are fixed."""

    def __init__(self, client: GitHubClient, sizes: PageSizes | None = None) -> None:
        self._client = client
        self._fixed = sizes
        self._learned = LearnedSizes()

    @property
    def sizes(self) -> PageSizes:
        """The sizes the next page will ask for."""
        return self._fixed or self._learned.sizes()

    def pages(
        self, repository: str, *, since: datetime | None, states: list[str] | None = None
    ) -> Iterator[PullRequestPage]:
        """Pages of complete pull requests updated at or after `since` (all when None), newest first.

        Raises:
            RepositoryRefusedError: the repository is missing, renamed away from the name asked for,
                private or internal (checked on every page, before anything of it is returned).
            GitHubError: from the client.
        """
        owner, name = repository.split("/", 1)
        after: str | None = None
        while True:
            sizes = self.sizes
            variables = {
                "owner": owner, "name": name, "first": sizes.pull_requests, "after": after, "states": states,
                "reviews": sizes.first_reviews, "threads": sizes.first_threads, "comments": sizes.first_comments,
            }
            try:
                data = self._client.graphql(queries.load("pull_requests"), variables)
            except GitHubNotFoundError:
                raise RepositoryRefusedError(
                    f"GitHub does not answer {repository} (not found){_clone_suffix_hint(repository)}",
                    repository=repository,
                ) from None
            with reading_github(f"a page of pull requests of {repository}"):
                repo = _require_public(repository, data.get("repository"), first_page=after is None)
                connection = repo["pullRequests"]
                nodes: list[Node] = connection["nodes"]
                in_window = [n for n in nodes
                             if since is None or parse_time(n["updatedAt"], "GitHub's updatedAt") >= since]
                info = connection["pageInfo"]
                more = len(in_window) == len(nodes) and info["hasNextPage"]
                page = PullRequestPage(repo["nameWithOwner"], connection["totalCount"],
                                       self._complete(in_window, sizes))
            yield page
            if not more:
                return
            after = next_cursor(info, after, f"pull requests of {repository}")

    def pull_request(self, repository: str, node_id: str) -> FetchedPullRequest | None:
        """The pull request `node_id` of `repository`, complete, or None when GitHub has no such pull request
        there now (deleted, or the id names something else).

        Raises:
            RepositoryRefusedError: the repository is no longer public, or answers under another name.
            GitHubError: from the client.
        """
        sizes = self.sizes
        variables = {"id": node_id, "reviews": sizes.first_reviews, "threads": sizes.first_threads,
                     "comments": sizes.first_comments}
        try:
            node = self._client.graphql(queries.load("pull_request"), variables).get("node")
        except GitHubNotFoundError:
            return None
        if not isinstance(node, dict) or node.get("__typename") != "PullRequest":
            return None
        with reading_github(f"pull request {node_id[:60]}"):
            _require_public(repository, node["repository"], first_page=False)
            [fetched] = self._complete([node], sizes)
            return fetched

    def pull_requests_by_number(
        self, repository: str, numbers: list[int]
    ) -> Iterator[tuple[list[FetchedPullRequest], list[int]]]:
        """The pull requests `numbers` of `repository`, complete, a page's worth per request and lazily (as
        `pages`): for each batch, the pull requests GitHub answered and the numbers it has none of now. One number
        gone fails its whole request (NOT_FOUND), so such a batch is asked again one number at a time.

        Raises:
            RepositoryRefusedError: the repository is no longer public, or answers under another name.
            GitHubError: from the client.
        """
        pending = list(numbers)
        while pending:
            sizes = self.sizes
            batch, pending = pending[:sizes.pull_requests], pending[sizes.pull_requests:]
            try:
                found = self._by_number(repository, batch, sizes)
            except GitHubNotFoundError:
                found = {}
                for number in batch:
                    with contextlib.suppress(GitHubNotFoundError):
                        found |= self._by_number(repository, [number], sizes)
            yield self._complete(list(found.values()), sizes), [n for n in batch if n not in found]

    def _by_number(self, repository: str, numbers: list[int], sizes: PageSizes) -> dict[int, Node]:
        owner, name = repository.split("/", 1)
        variables: dict[str, Any] = {"owner": owner, "name": name, "reviews": sizes.first_reviews,
                                     "threads": sizes.first_threads, "comments": sizes.first_comments}
        variables |= {f"number{index}": number for index, number in enumerate(numbers)}
        data = self._client.graphql(queries.pull_requests_by_number(len(numbers)), variables)
        with reading_github(f"pull requests of {repository} by number"):
            repo = _require_public(repository, data.get("repository"), first_page=False)
            answered = {number: repo[queries.number_alias(index)] for index, number in enumerate(numbers)}
        return {number: node for number, node in answered.items() if node is not None}

    def _complete(self, pulls: list[Node], sizes: PageSizes) -> list[FetchedPullRequest]:
        """The pull requests with every submitted review and every thread's submitted comments, each connection
        with more continued in batched follow-ups; a pending (draft) review, a comment of one, and a thread
        holding nothing else are left out (PENDING_REVIEW)."""
        reviews = [Follow.of("reviews", pr["id"], pr["reviews"]) for pr in pulls]
        threads = [Follow.of("reviewThreads", pr["id"], pr["reviewThreads"]) for pr in pulls]
        comments: dict[str, Follow] = {}
        for thread in (thread for follow in threads for thread in follow.nodes):
            comments.setdefault(thread["id"], Follow.of("comments", thread["id"], thread["comments"]))
        caps = Caps(sizes.more_reviews, sizes.more_threads, sizes.more_comments, sizes.first_comments)
        found = FollowUps(self._client, caps).complete([*reviews, *threads, *comments.values()])
        comments = found | comments  # a thread on the page and again in a follow-up keeps the page's comments
        return [self._assemble(pr, pr_reviews, pr_threads, comments)
                for pr, pr_reviews, pr_threads in zip(pulls, reviews, threads, strict=True)]

    def _assemble(self, pr: Node, reviews: Follow, threads: Follow, comments: dict[str, Follow]) -> FetchedPullRequest:
        kept_threads = each_once(threads.nodes)
        self._learned.observe(reviews.total, threads.total, [comments[t["id"]].total for t in kept_threads])
        pull = FetchedPullRequest(pr, [r for r in each_once(reviews.nodes) if r.get("state") != PENDING_REVIEW])
        for thread in kept_threads:
            thread_comments = each_once(comments[thread["id"]].nodes)
            submitted = [comment for comment in thread_comments if not _in_pending_review(comment)]
            if submitted or not thread_comments:
                pull.threads.append((thread, submitted))
        return pull


def _in_pending_review(comment: Node) -> bool:
    review = comment.get("pullRequestReview")
    return isinstance(review, dict) and review.get("state") == PENDING_REVIEW


def _clone_suffix_hint(repository: str) -> str:
    """For an allowlist entry stored ending in `.git` (before `review allow` refused one): the two commands that
    mend it; else nothing."""
    bare = without_clone_suffix(repository)
    if bare is None:
        return ""
    return (f"; a repository is named without .git: run `theurian review disallow {repository}`, then "
            f"`theurian review allow {bare}`")


def _require_public(repository: str, repo: Node | None, *, first_page: bool) -> Node:
    # Checked on every page: what a later page refuses stops the run, and the pages before it, answered public,
    # stay written.
    written = ("nothing of it was written" if first_page else
               "the run stopped there; the pages GitHub answered as public before it stay written")
    if repo is None:
        raise RepositoryRefusedError(f"GitHub does not answer {repository}{_clone_suffix_hint(repository)}",
                                     repository=repository)
    if fold_repository(repo["nameWithOwner"]) != fold_repository(repository):
        raise RepositoryRefusedError(
            f"GitHub answers {repository} as {repo['nameWithOwner']} (renamed?); allowlist that name instead; "
            f"{written}",
            repository=repository,
        )
    if repo.get("isPrivate") or repo.get("visibility") != PUBLIC_VISIBILITY:
        raise RepositoryRefusedError(
            f"{repository} is not public (visibility {str(repo.get('visibility')).lower()}); "
            f"only public repositories are ingested, and {written}",
            repository=repository,
        )
    return repo
