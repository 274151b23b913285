"""A loopback fake GitHub GraphQL API: a threaded HTTP server on 127.0.0.1 answering any query the ingest sends
from a corpus (tests/support/github_corpus.py), in GitHub's response shape, with rate-limit headers, `rateLimit`
costs charged by GitHub's documented rule (tests/support/github_cost.py), and injectable faults.

Each query is validated and executed against GitHub's public schema (fixtures/github/schema.graphql) by
graphql-core: a field, alias or variable GitHub would refuse is refused here with GitHub's error shape, and the
answer holds exactly the fields asked for, under their aliases. `node(id:)`, `repository(owner:, name:)` and a
repository's `pullRequest(number:)` answer NOT_FOUND as GitHub does; connections are paged from the corpus's
complete lists with `totalCount`.

Faults (`fault_plan`, cycled on every `fault_every`-th request): "502"; "secondary" (403 with `retry-after: 0`
and GitHub's secondary-rate-limit message); "rate_limited" (a 200 carrying a GraphQL RATE_LIMITED error).
"""

from __future__ import annotations

import copy
import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from graphql import DocumentNode, GraphQLResolveInfo, GraphQLSchema, build_schema, execute, parse, validate

from tests.support.fake_github_app import FakeGitHubApp, recorded
from tests.support.github_cost import query_cost

Node = dict[str, Any]
BUDGET = 5000
SCHEMA_PATH = Path(__file__).resolve().parents[2] / "fixtures" / "github" / "schema.graphql"
# What a corpus node is, by the connection holding it (the corpus's nodes carry no __typename of their own).
TYPENAMES = {"pullRequests": "PullRequest", "reviews": "PullRequestReview",
             "reviewThreads": "PullRequestReviewThread", "comments": "PullRequestReviewComment"}


@cache
def github_schema() -> GraphQLSchema:
    """GitHub's public schema, built once per process (about a second)."""
    return build_schema(SCHEMA_PATH.read_text(encoding="utf-8"), assume_valid=True)


@cache
def _parsed(query: str) -> tuple[DocumentNode | None, tuple[Node, ...]]:
    try:
        document = parse(query)
    except Exception as exc:
        return None, ({"message": str(exc).splitlines()[0]},)
    errors = validate(github_schema(), document)
    return document, tuple({"message": e.message, "extensions": {"code": "undefinedField"}} for e in errors)


def _page(items: list[Node], first: int, after: str | None) -> tuple[list[Node], Node]:
    start = int(after.removeprefix("cursor:")) if after else 0
    chunk = items[start:start + first]
    end = start + len(chunk)
    return chunk, {"hasNextPage": end < len(items), "endCursor": f"cursor:{end}" if chunk else after}


def _connection(items: list[Node], args: Node) -> Node:
    nodes, info = _page(items, args.get("first") or 0, args.get("after"))
    return {"totalCount": len(items), "pageInfo": info, "nodes": nodes}


class _Root:
    """The query root of one request: the fake, and the NOT_FOUND errors the request's resolvers met."""

    def __init__(self, fake: FakeGitHub) -> None:
        self.fake, self.errors = fake, list[Node]()
        self._index: dict[str, tuple[str, Node, Node]] | None = None

    def index(self) -> dict[str, tuple[str, Node, Node]]:
        if self._index is None:
            self._index = self.fake._index()
        return self._index


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
        self.app: FakeGitHubApp | None = None  # set: GitHub App sign-in (tests/support/fake_github_app.py)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # --- the GraphQL answers -------------------------------------------------------------------------

    def _index(self) -> dict[str, tuple[str, Node, Node]]:
        """Every node of the corpus by id: (typename, node, its repository)."""
        index = {}
        for repo in self.repositories.values():
            for pr in repo["pullRequests"]:
                index[pr["id"]] = ("PullRequest", pr, repo)
                for review in pr["reviews"]["nodes"]:
                    index[review["id"]] = ("PullRequestReview", review, repo)
                for thread in pr["reviewThreads"]["nodes"]:
                    index[thread["id"]] = ("PullRequestReviewThread", thread, repo)
                    for comment in thread["comments"]["nodes"]:
                        index.setdefault(comment["id"], ("PullRequestReviewComment", comment, repo))
        return index

    def _nodes(self) -> dict[str, Node]:
        return {node_id: node for node_id, (_, node, _) in self._index().items()}

    def _root_field(self, root: _Root, info: GraphQLResolveInfo, args: Node) -> Any:
        name, path = info.field_name, info.path.as_list()
        if name == "rateLimit":  # filled in with the request's real cost once it is known
            return {"cost": 0, "remaining": BUDGET, "resetAt": "2026-12-01T00:00:00Z", "nodeCount": 0,
                    "limit": BUDGET, "used": 0}
        if name == "repository":
            full_name = f"{args['owner']}/{args['name']}"
            repo = self.repositories.get(full_name.casefold())
            if repo is None:
                root.errors.append({"type": "NOT_FOUND", "path": path,
                                    "message": f"Could not resolve to a Repository with the name '{full_name}'."})
            return repo
        if name == "node":
            found = root.index().get(args["id"])
            if found is None:
                root.errors.append({"type": "NOT_FOUND", "path": path,
                                    "message": f"Could not resolve to a node with the global id of '{args['id']}'"})
                return None
            typename, node, repo = found
            return node | {"__typename": typename, "__repository": repo}
        return None

    def _resolve(self, source: Any, info: GraphQLResolveInfo, **args: Any) -> Any:
        if isinstance(source, _Root):
            return self._root_field(source, info, args)
        if not isinstance(source, dict):
            return None
        name = info.field_name
        value = source.get(name)
        if name == "pullRequests" and isinstance(value, list):
            pulls = [p for p in value if not args.get("states") or p["state"] in args["states"]]
            return _connection(sorted(pulls, key=lambda p: p["updatedAt"], reverse=True), args)
        if name == "repository" and "__repository" in source:
            return source["__repository"]
        if name == "pullRequest" and isinstance(source.get("pullRequests"), list):  # a repository's, by number
            found = next((p for p in source["pullRequests"] if p["number"] == args["number"]), None)
            if found is None:
                message = f"Could not resolve to a PullRequest with the number of {args['number']}."
                info.root_value.errors.append({"type": "NOT_FOUND", "path": info.path.as_list(), "message": message})
            return found
        if isinstance(value, dict) and isinstance(value.get("nodes"), list) and "first" in args:
            return _connection(value["nodes"], args)
        return value

    def answer(self, query: str, v: Node) -> tuple[Node, int]:
        """(response body, GraphQL cost) for one query."""
        document, refusals = _parsed(query)
        if document is None or refusals:
            return {"errors": list(refusals)}, 0
        root = _Root(self)
        result = execute(github_schema(), document, root_value=root, variable_values=v,
                         field_resolver=self._resolve)
        errors = root.errors + [{"message": e.message, "path": e.path} for e in result.errors or []]
        body: Node = {"data": result.data} | ({"errors": errors} if errors else {})
        return body, query_cost(github_schema(), document, v).points

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
            # The headers and the body go out as two writes: with Nagle's algorithm the second waits for the
            # client's delayed ACK of the first, 40 ms a request.
            disable_nagle_algorithm = True

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

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                payload = json.loads(self.rfile.read(length) or b"{}")
                if fake.app is not None and self.path.startswith("/app/installations/"):
                    return self._send(*fake.app.exchange(self.path, self.headers.get("Authorization", "")))
                fault = fake.next_fault()
                fake.authorizations.append(self.headers.get("Authorization", ""))
                if fake.latency:
                    time.sleep(fake.latency)
                reset = str(int(time.time()) + 3600)
                limits = {"x-ratelimit-limit": str(BUDGET), "x-ratelimit-reset": reset,
                          "x-ratelimit-remaining": str(BUDGET - fake.graphql_points)}
                if not self.headers.get("Authorization"):
                    return self._send(401, {"message": "Requires authentication"})
                if fake.app is not None and not fake.app.admits(self.headers.get("Authorization", "")):
                    return self._send(401, recorded("bad-credentials-401.json"))
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
                rate = body["data"].get("rateLimit") if isinstance(body.get("data"), dict) else None
                if isinstance(rate, dict):
                    charged = {"cost": cost, "remaining": BUDGET - fake.graphql_points, "used": fake.graphql_points}
                    rate.update({key: value for key, value in charged.items() if key in rate})
                return self._send(200, body, limits)

        server = _QuietServer(("127.0.0.1", 0), Handler)
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


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-answer (an ingest a test interrupts) is what GitHub would shrug at too: no
    traceback in the test output; any other fault is still printed."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)
