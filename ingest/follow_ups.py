"""Batched follow-ups: every connection of a page of pull requests that has more (reviews, threads, and the
comments of each thread) is continued together, one aliased `node(id:)` field per connection, each from its own
cursor and sized from its own totalCount, until every one of them is at its end.

GitHub charges a request by the connection requests it needs, divided by 100 (at least 1 point): a follow-up of
one connection costs a whole point alone but a hundredth of one in a batch. A batch is kept within
BATCH_REQUESTS connection requests, BATCH_NODES nodes and BATCH_FIELDS fields, far below GitHub's limits (500,000
nodes per call), so one round of a page is one request or a few.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Final

from ingest import queries
from ingest.client import GitHubClient
from ingest.errors import GitHubError, reading_github

Node = dict[str, Any]

BATCH_REQUESTS: Final = 5_000  # 50 points
BATCH_NODES: Final = 100_000  # a fifth of GitHub's limit per call
BATCH_FIELDS: Final = 200


@dataclass
class Follow:
    """One connection of one node: its nodes so far, and where its next page starts."""

    kind: str  # a queries.FOLLOW_UP_KINDS key
    node_id: str
    nodes: list[Node]
    total: int  # totalCount, as last answered
    cursor: str | None  # the next page's; None when the connection is at its end

    @classmethod
    def of(cls, kind: str, node_id: str, connection: Node) -> Follow:
        """The connection as a page answered it, its cursor checked to move (next_cursor)."""
        follow = cls(kind, node_id, [], 0, None)
        follow.take(connection)
        return follow

    def take(self, connection: Node) -> None:
        with reading_github(f"the {self.kind} of node {self.node_id[:60]}"):
            self.nodes.extend(connection["nodes"])
            self.total = connection["totalCount"]
            info = connection["pageInfo"]
            more = info["hasNextPage"]
        self.cursor = next_cursor(info, self.cursor, f"{self.kind} of node {self.node_id[:60]}") if more else None

    def first(self, cap: int) -> int:
        """The next page's size: what totalCount says is left (at least 1, a list may have grown), up to `cap`."""
        return max(1, min(cap, self.total - len(self.nodes)))


@dataclass(frozen=True)
class Caps:
    """Most nodes asked for at once per kind, and the first page of comments of each thread a follow-up fetches."""

    reviews: int
    threads: int
    comments: int
    thread_comments: int

    def first(self, follow: Follow) -> int:
        cap = {"reviews": self.reviews, "reviewThreads": self.threads, "comments": self.comments}[follow.kind]
        return follow.first(cap)

    def charge(self, follow: Follow) -> tuple[int, int]:
        """(connection requests, nodes) GitHub reckons for this follow-up's field."""
        first = self.first(follow)
        if follow.kind == "reviewThreads":
            return 1 + first, first * (1 + self.thread_comments)
        return 1, first


class FollowUps:
    """Runs follow-ups through `client` until every connection given is whole."""

    def __init__(self, client: GitHubClient, caps: Caps) -> None:
        self._client, self._caps = client, caps

    def complete(self, follows: list[Follow]) -> dict[str, Follow]:
        """Page every follow to its end, and the comments of every thread the follows fetch; return the comment
        follows of those new threads (their nodes whole) by thread id (the first, for a thread answered twice)."""
        pending = deque(f for f in follows if f.cursor is not None)
        found: dict[str, Follow] = {}
        while pending:
            batch = self._take(pending)
            for follow, threads in zip(batch, self._send(batch), strict=True):
                for thread in threads:
                    with reading_github("a review thread"):
                        comments = Follow.of("comments", thread["id"], thread["comments"])
                    if thread["id"] in found:
                        continue
                    found[thread["id"]] = comments
                    if comments.cursor is not None:
                        pending.append(comments)
                if follow.cursor is not None:
                    pending.append(follow)
        return found

    def _take(self, pending: deque[Follow]) -> list[Follow]:
        batch: list[Follow] = []
        requests = nodes = 0
        while pending and len(batch) < BATCH_FIELDS:
            more_requests, more_nodes = self._caps.charge(pending[0])
            if batch and (requests + more_requests > BATCH_REQUESTS or nodes + more_nodes > BATCH_NODES):
                break
            batch.append(pending.popleft())
            requests, nodes = requests + more_requests, nodes + more_nodes
        return batch

    def _send(self, batch: list[Follow]) -> list[list[Node]]:
        """One request for the batch; each follow takes its page. Per follow, the threads it fetched (if any)."""
        kinds = tuple(f.kind for f in batch)
        variables: dict[str, Any] = {"comments": self._caps.thread_comments} if "reviewThreads" in kinds else {}
        for index, follow in enumerate(batch):
            variables |= {f"id{index}": follow.node_id, f"first{index}": self._caps.first(follow),
                          f"after{index}": follow.cursor}
        data = self._client.graphql(queries.follow_ups(kinds), variables)
        fetched: list[list[Node]] = []
        for index, follow in enumerate(batch):
            node = data.get(queries.alias(index))
            if not isinstance(node, dict) or not isinstance(node.get(follow.kind), dict):
                raise GitHubError(f"GitHub stopped answering node {follow.node_id[:60]} while paging {follow.kind}")
            before = len(follow.nodes)
            follow.take(node[follow.kind])
            fetched.append(follow.nodes[before:] if follow.kind == "reviewThreads" else [])
        return fetched


def each_once(nodes: list[Node]) -> list[Node]:
    """`nodes` with a node GitHub answered again on a later page (a list that shifted under the cursor) kept once,
    where it first came: twice, a comment would be stored twice in its thread, a key twice in a pull request's."""
    seen: set[str] = set()
    kept = []
    for node in nodes:
        if node["id"] not in seen:
            seen.add(node["id"])
            kept.append(node)
    return kept


def next_cursor(info: Node, previous: str | None, what: str) -> str:
    """The cursor of the next page, refusing one that would not move: GitHub saying "there is more" with no cursor,
    or the cursor just used, would otherwise have the same page asked for again, forever."""
    cursor = info.get("endCursor")
    if not isinstance(cursor, str) or not cursor or cursor == previous:
        raise GitHubError(
            f"GitHub said there is another page of {what} but gave no new cursor to it; stopped rather than ask "
            "for the same page again (run the ingest again later)"
        )
    return cursor
