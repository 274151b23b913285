"""Paging: pull requests newest update first, and every nested connection of each one to its end.

Each pull request page asks for small first pages of reviews, threads and comments (GraphQL's cost is the sum
of parent counts per connection, so small nested pages keep a 100-PR page near 7 points); only the few
connections that have more are followed up, one node at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from evidence.records import fold_repository
from ingest import queries
from ingest.client import GitHubClient, GitHubNotFoundError
from ingest.errors import GitHubError, RepositoryRefusedError, reading_github

Node = dict[str, Any]

PUBLIC_VISIBILITY: Final = "PUBLIC"
# A review not yet submitted: GitHub shows it (and the comments in it) to its author alone, so the viewer's own
# draft comes back on the token owner's queries. It was never visible to the repository's audience, which is the
# whole of what ingestion may land (contract: reviewIngestionScope "public-allowlisted").
PENDING_REVIEW: Final = "PENDING"


@dataclass(frozen=True)
class PageSizes:
    pull_requests: int = 100
    first_reviews: int = 25
    first_threads: int = 5
    first_comments: int = 5
    more_reviews: int = 100
    more_threads: int = 50
    more_comments: int = 100


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


def parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


class Fetcher:
    """Reads pull requests of one repository through a GitHubClient. Lazy: a page is asked for only when
    the previous one has been consumed, so its records are written first."""

    def __init__(self, client: GitHubClient, sizes: PageSizes | None = None) -> None:
        self._client = client
        self._sizes = sizes or PageSizes()

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
            variables = {
                "owner": owner, "name": name, "first": self._sizes.pull_requests, "after": after,
                "states": states, "reviews": self._sizes.first_reviews, "threads": self._sizes.first_threads,
                "comments": self._sizes.first_comments,
            }
            try:
                data = self._client.graphql(queries.load("pull_requests"), variables)
            except GitHubNotFoundError:
                raise RepositoryRefusedError(
                    f"GitHub does not answer {repository} (not found)", repository=repository
                ) from None
            with reading_github(f"a page of pull requests of {repository}"):
                repo = _require_public(repository, data.get("repository"), first_page=after is None)
                connection = repo["pullRequests"]
                nodes: list[Node] = connection["nodes"]
                in_window = [n for n in nodes if since is None or parse_time(n["updatedAt"]) >= since]
                page = PullRequestPage(repo["nameWithOwner"], connection["totalCount"],
                                       [self._complete(node) for node in in_window])
                info = connection["pageInfo"]
                more = len(in_window) == len(nodes) and info["hasNextPage"]
            yield page
            if not more:
                return
            after = _next_cursor(info, after, f"pull requests of {repository}")

    def pull_request(self, repository: str, node_id: str) -> FetchedPullRequest | None:
        """The pull request `node_id` of `repository`, complete, or None when GitHub has no such pull request
        there now (deleted, or the id names something else).

        Raises:
            RepositoryRefusedError: the repository is no longer public, or answers under another name.
            GitHubError: from the client.
        """
        variables = {"id": node_id, "reviews": self._sizes.first_reviews, "threads": self._sizes.first_threads,
                     "comments": self._sizes.first_comments}
        try:
            node = self._client.graphql(queries.load("pull_request"), variables).get("node")
        except GitHubNotFoundError:
            return None
        if not isinstance(node, dict) or node.get("__typename") != "PullRequest":
            return None
        with reading_github(f"pull request {node_id[:60]}"):
            _require_public(repository, node["repository"], first_page=False)
            return self._complete(node)

    def _complete(self, pr: Node) -> FetchedPullRequest:
        """The pull request with every submitted review and every thread's submitted comments; a pending (draft)
        review, a comment of one, and a thread holding nothing else are left out (PENDING_REVIEW)."""
        reviews = self._rest(pr["reviews"], "pull_request_reviews", pr["id"], "reviews",
                             {"first": self._sizes.more_reviews})
        threads = self._rest(pr["reviewThreads"], "pull_request_threads", pr["id"], "reviewThreads",
                             {"first": self._sizes.more_threads, "comments": self._sizes.first_comments})
        fetched = FetchedPullRequest(pr, [review for review in reviews if review.get("state") != PENDING_REVIEW])
        for thread in threads:
            comments = self._rest(thread["comments"], "thread_comments", thread["id"], "comments",
                                  {"first": self._sizes.more_comments})
            submitted = [comment for comment in comments if not _in_pending_review(comment)]
            if submitted or not comments:
                fetched.threads.append((thread, submitted))
        return fetched

    def _rest(self, connection: Node, operation: str, node_id: str, field_name: str,
              variables: dict[str, Any]) -> list[Node]:
        """The connection's nodes, following `pageInfo` with `operation` until GitHub has no more."""
        nodes: list[Node] = list(connection["nodes"])
        info = connection["pageInfo"]
        after: str | None = None
        while info["hasNextPage"]:
            after = _next_cursor(info, after, f"{field_name} of node {node_id[:60]}")
            data = self._client.graphql(queries.load(operation), {"id": node_id, "after": after, **variables})
            node = data.get("node")
            if not isinstance(node, dict) or field_name not in node:
                raise GitHubError(f"GitHub stopped answering node {node_id[:60]} while paging {field_name}")
            with reading_github(f"the {field_name} of node {node_id[:60]}"):
                nodes.extend(node[field_name]["nodes"])
                info = node[field_name]["pageInfo"]
        with reading_github(f"the {field_name} of node {node_id[:60]}"):
            return _each_once(nodes)


def _each_once(nodes: list[Node]) -> list[Node]:
    """`nodes` with a node GitHub answered again on a later page (a list that shifted under the cursor) kept once,
    where it first came: twice, a comment would be stored twice in its thread, a key twice in a pull request's."""
    seen: set[str] = set()
    kept = []
    for node in nodes:
        if node["id"] not in seen:
            seen.add(node["id"])
            kept.append(node)
    return kept


def _in_pending_review(comment: Node) -> bool:
    review = comment.get("pullRequestReview")
    return isinstance(review, dict) and review.get("state") == PENDING_REVIEW


def _next_cursor(info: Node, previous: str | None, what: str) -> str:
    """The cursor of the next page, refusing one that would not move: GitHub saying "there is more" with no cursor,
    or the cursor just used, would otherwise have the same page asked for again, forever."""
    cursor = info.get("endCursor")
    if not isinstance(cursor, str) or not cursor or cursor == previous:
        raise GitHubError(
            f"GitHub said there is another page of {what} but gave no new cursor to it; stopped rather than ask "
            "for the same page again (run the ingest again later)"
        )
    return cursor


def _require_public(repository: str, repo: Node | None, *, first_page: bool) -> Node:
    # Checked on every page: what a later page refuses stops the run, and the pages before it, answered public,
    # stay written.
    written = ("nothing of it was written" if first_page else
               "the run stopped there; the pages GitHub answered as public before it stay written")
    if repo is None:
        raise RepositoryRefusedError(f"GitHub does not answer {repository}", repository=repository)
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
