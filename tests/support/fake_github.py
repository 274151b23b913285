"""A loopback fake GitHub GraphQL API: a threaded HTTP server on 127.0.0.1 answering the ingest's four queries
from a corpus (tests/support/github_corpus.py) in GitHub's response shape, with rate-limit headers,
`rateLimit` costs computed the way GitHub computes them, and injectable faults.

Faults (`fault_plan`, cycled on every `fault_every`-th request): "502"; "secondary" (403 with `retry-after: 0`
and GitHub's secondary-rate-limit message); "rate_limited" (a 200 carrying a GraphQL RATE_LIMITED error).
"""

from __future__ import annotations

import copy
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Node = dict[str, Any]
BUDGET = 5000


def _page(items: list[Node], first: int, after: str | None) -> tuple[list[Node], Node]:
    start = int(after.removeprefix("cursor:")) if after else 0
    chunk = items[start:start + first]
    end = start + len(chunk)
    return chunk, {"hasNextPage": end < len(items), "endCursor": f"cursor:{end}" if chunk else after}


class FakeGitHub:
    """State the tests read and change: `repositories` (mutable corpus), `requests`, `points`, faults."""

    def __init__(self, corpus: dict[str, Any], *, latency: float = 0.0) -> None:
        self.repositories: dict[str, Node] = {
            r["nameWithOwner"].casefold(): r for r in copy.deepcopy(corpus)["repositories"]
        }
        self.latency = latency
        self.requests = 0
        self.graphql_points = 0
        self.faults_served = 0
        self.fault_plan: list[str] = []
        self.fault_every = 0
        self.authorizations: list[str] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # --- the GraphQL answers -------------------------------------------------------------------------

    def _nodes(self) -> dict[str, Node]:
        index = {}
        for repo in self.repositories.values():
            for pr in repo["pullRequests"]:
                index[pr["id"]] = pr
                for thread in pr["reviewThreads"]["nodes"]:
                    index[thread["id"]] = thread
        return index

    def _shape_thread(self, thread: Node, comments: int) -> Node:
        nodes, info = _page(thread["comments"]["nodes"], comments, None)
        return thread | {"comments": {"pageInfo": info, "nodes": nodes}}

    def _shape_pr(self, pr: Node, v: Node) -> Node:
        reviews, review_info = _page(pr["reviews"]["nodes"], v["reviews"], None)
        threads, thread_info = _page(pr["reviewThreads"]["nodes"], v["threads"], None)
        return pr | {
            "reviews": {"pageInfo": review_info, "nodes": reviews},
            "reviewThreads": {"pageInfo": thread_info,
                              "nodes": [self._shape_thread(t, v["comments"]) for t in threads]},
        }

    def answer(self, query: str, v: Node) -> tuple[Node, int]:
        """(response body, GraphQL cost) for one query."""
        operation = re.search(r"query\s+(\w+)", query)
        name = operation.group(1) if operation else ""
        if name == "PullRequests":
            repo = self.repositories.get(f"{v['owner']}/{v['name']}".casefold())
            if repo is None:
                return {"data": {"repository": None}, "errors": [{
                    "type": "NOT_FOUND", "path": ["repository"],
                    "message": f"Could not resolve to a Repository with the name '{v['owner']}/{v['name']}'."}]}, 1
            pulls = [p for p in repo["pullRequests"] if not v.get("states") or p["state"] in v["states"]]
            pulls.sort(key=lambda p: p["updatedAt"], reverse=True)
            chunk, info = _page(pulls, v["first"], v.get("after"))
            cost = max(1, round((1 + 2 * v["first"] + v["first"] * v["threads"]) / 100))
            return {"data": {"repository": {
                "nameWithOwner": repo["nameWithOwner"], "isPrivate": repo["isPrivate"],
                "visibility": repo["visibility"], "pullRequests": {
                    "totalCount": len(pulls), "pageInfo": info, "nodes": [self._shape_pr(p, v) for p in chunk]}}}}, cost
        if name == "RateLimit":  # `theurian doctor --online`: the budget alone (the rate limit is added below)
            return {"data": {"rateLimit": {}}}, 1
        node = self._nodes().get(v.get("id", ""))
        if node is None:
            return {"data": {"node": None}, "errors": [{"type": "NOT_FOUND", "path": ["node"],
                                                        "message": "Could not resolve to a node"}]}, 1
        if name == "PullRequest":
            if "number" not in node:  # a thread's id: GitHub answers the node, and it is no pull request
                return {"data": {"node": {"__typename": "PullRequestReviewThread"}}}, 1
            repo = next(r for r in self.repositories.values() if node in r["pullRequests"])
            about = {"nameWithOwner": repo["nameWithOwner"], "isPrivate": repo["isPrivate"],
                     "visibility": repo["visibility"]}
            return {"data": {"node": self._shape_pr(node, v) | {"__typename": "PullRequest", "repository": about}}}, 1
        if name == "PullRequestReviews":
            nodes, info = _page(node["reviews"]["nodes"], v["first"], v.get("after"))
            return {"data": {"node": {"reviews": {"pageInfo": info, "nodes": nodes}}}}, 1
        if name == "PullRequestThreads":
            nodes, info = _page(node["reviewThreads"]["nodes"], v["first"], v.get("after"))
            shaped = [self._shape_thread(t, v["comments"]) for t in nodes]
            return {"data": {"node": {"reviewThreads": {"pageInfo": info, "nodes": shaped}}}}, \
                max(1, round((1 + v["first"]) / 100))
        if name == "ThreadComments":
            nodes, info = _page(node["comments"]["nodes"], v["first"], v.get("after"))
            return {"data": {"node": {"comments": {"pageInfo": info, "nodes": nodes}}}}, 1
        return {"errors": [{"message": f"unknown operation {name}"}]}, 1

    def next_fault(self) -> str | None:
        with self._lock:
            self.requests += 1
            if self.fault_plan and self.fault_every and (self.requests - 1) % self.fault_every == 0:
                fault = self.fault_plan[self.faults_served % len(self.fault_plan)]
                self.faults_served += 1
                return fault
        return None

    # --- the server ----------------------------------------------------------------------------------

    @contextmanager
    def running(self) -> Iterator[FakeGitHub]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def _send(self, status: int, body: Node | str, headers: dict[str, str] | None = None) -> None:
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                length = int(self.headers.get("Content-Length", "0"))
                payload = json.loads(self.rfile.read(length) or b"{}")
                fault = fake.next_fault()
                fake.authorizations.append(self.headers.get("Authorization", ""))
                if fake.latency:
                    time.sleep(fake.latency)
                reset = str(int(time.time()) + 3600)
                limits = {"x-ratelimit-limit": str(BUDGET), "x-ratelimit-reset": reset,
                          "x-ratelimit-remaining": str(BUDGET - fake.graphql_points)}
                if not self.headers.get("Authorization"):
                    return self._send(401, {"message": "Requires authentication"})
                if self.path != "/graphql":
                    return self._send(404, {"message": "Not Found"})
                if fault == "502":
                    return self._send(502, "<html><body>502 Bad Gateway</body></html>")
                if fault == "secondary":
                    return self._send(403, {"message": "You have exceeded a secondary rate limit. Please wait."},
                                      {"retry-after": "0"})
                if fault == "rate_limited":
                    return self._send(200, {"data": None, "errors": [
                        {"type": "RATE_LIMITED", "message": "API rate limit exceeded for user ID 1."}]},
                        limits | {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()))})
                body, cost = fake.answer(payload.get("query", ""), payload.get("variables") or {})
                with fake._lock:
                    fake.graphql_points += cost
                if isinstance(body.get("data"), dict):
                    body["data"]["rateLimit"] = {"cost": cost, "remaining": BUDGET - fake.graphql_points,
                                                 "resetAt": "2026-12-01T00:00:00Z", "nodeCount": 0}
                return self._send(200, body, limits)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self._server = server
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)
