"""A synthetic GitHub corpus: pull request nodes in GitHub's exact GraphQL shape (the fields the ingest
queries select), with every nested connection complete. The loopback fake cuts pages out of it.

`hard_cases()` is the small fixture corpus (`fixtures/github/corpus.json` is its committed output, rewritten
by `python -m tests.support.github_corpus`); `generated(n)` is the benchmark's typical corpus and
`heavy_tailed(n)` its heavy-tailed one.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

Node = dict[str, Any]
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "github" / "corpus.json"
PUBLIC_REPOSITORY = "Acme/Widgets"
PRIVATE_REPOSITORY = "acme/secret-plans"
EPOCH = datetime(2026, 3, 1, tzinfo=UTC)


def public_repository(repository: str, pulls: list[Node]) -> dict[str, Any]:
    """One public repository's entry of a corpus the fake GitHub serves."""
    return {"nameWithOwner": repository, "isPrivate": False, "visibility": "PUBLIC", "pullRequests": pulls}


def public_corpus(repository: str, pulls: list[Node]) -> dict[str, Any]:
    """A corpus of one public repository holding `pulls`."""
    return {"repositories": [public_repository(repository, pulls)]}


def ts(minutes: int) -> str:
    return (EPOCH + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def user(login: str, node_id: str, typename: str = "User") -> Node:
    return {"__typename": typename, "login": login, "id": node_id}


ALICE = user("alice", "U_kgDOAAAlice")
BOB = user("bob-reviewer", "U_kgDOBBBob")
BOT = user("ci-bot", "BOT_kgDOCiBot", "Bot")


class Builder:
    """Builds one repository's pull requests with ids unique within the corpus."""

    def __init__(self, repository: str, prefix: str) -> None:
        self.repository, self.prefix, self.serial = repository, prefix, 0

    def next_id(self, kind: str) -> str:
        self.serial += 1
        return f"{kind}_kwDO{self.prefix}{self.serial:06d}"

    def comment(self, pr: Node, review: Node, body: str, author: Node | None, minute: int,
                reply_to: Node | None = None, outdated: bool = False) -> Node:
        node_id = self.next_id("PRRC")
        db = 100000 + self.serial
        return {
            "id": node_id, "fullDatabaseId": str(db), "url": f"{pr['url']}#discussion_r{db}", "body": body,
            "author": author, "authorAssociation": "MEMBER" if author else "NONE", "createdAt": ts(minute),
            "updatedAt": ts(minute), "lastEditedAt": None, "commit": {"oid": "c0ffee" + "0" * 34},
            "originalCommit": {"oid": "c0ffee" + "0" * 34}, "diffHunk": "@@ -1,3 +1,4 @@\n+changed line",
            "replyTo": {"id": reply_to["id"]} if reply_to else None,
            "pullRequestReview": {"id": review["id"], "state": review["state"]}, "isMinimized": False,
            "minimizedReason": None, "outdated": outdated,
        }

    def thread(self, path: str, comments: list[Node], *, resolved: bool = False, outdated: bool = False,
               node_id: str | None = None) -> Node:
        return {
            "id": node_id or self.next_id("PRRT"), "isResolved": resolved, "isOutdated": outdated,
            "isCollapsed": resolved, "path": path, "line": None if outdated else 10, "originalLine": 10,
            "startLine": None, "originalStartLine": None, "diffSide": "RIGHT", "startDiffSide": None,
            "subjectType": "LINE", "resolvedBy": ALICE if resolved else None, "comments": {"nodes": comments},
        }

    def review(self, pr: Node, state: str, author: Node | None, minute: int, body: str = "") -> Node:
        node_id = self.next_id("PRR")
        return {
            "id": node_id, "url": f"{pr['url']}#pullrequestreview-{self.serial}", "state": state, "body": body,
            "author": author, "authorAssociation": "COLLABORATOR" if author else "NONE", "createdAt": ts(minute),
            "submittedAt": ts(minute), "updatedAt": ts(minute), "lastEditedAt": None,
            "commit": {"oid": "c0ffee" + "0" * 34},
        }

    def pull_request(self, number: int, minute: int, *, title: str, body: str = "", author: Node | None = ALICE,
                     state: str = "MERGED", rollup: str | None = "SUCCESS") -> Node:
        merged = state == "MERGED"
        return {
            "id": self.next_id("PR"), "number": number,
            "url": f"https://github.com/{self.repository}/pull/{number}", "title": title, "body": body,
            "state": state, "isDraft": False, "author": author, "authorAssociation": "MEMBER",
            "createdAt": ts(minute - 60), "updatedAt": ts(minute), "closedAt": None if state == "OPEN" else ts(minute),
            "merged": merged, "mergedAt": ts(minute) if merged else None, "mergedBy": ALICE if merged else None,
            "mergeCommit": {"oid": f"{number:040x}"} if merged else None, "baseRefName": "main",
            "headRefName": f"topic-{number}", "baseRefOid": "a" * 40, "headRefOid": "b" * 40,
            "statusCheckRollup": {"state": rollup} if rollup else None,
            "reviews": {"nodes": []}, "reviewThreads": {"nodes": []},
        }


_THREAD_STATES = {"resolved": (True, False), "outdated": (False, True), "open": (False, False)}


def one_thread_pull_requests(items: list[dict[str, Any]], repository: str, first_number: int, prefix: str,
                             reviewers: tuple[Node, ...] = (BOB,)) -> tuple[list[Node], dict[str, str]]:
    """Each labelled thread (`id`, `comments`, `path`, `state`) as one pull request of `repository` holding it
    (GitHub's GraphQL shape, for the fake), reviewed in turn by `reviewers` and answered by ALICE; and the map from
    each labelled thread id to the node id GitHub gives its thread."""
    builder = Builder(repository, prefix)
    pulls, node_ids = [], {}
    for offset, item in enumerate(items):
        number, minute = first_number + offset, 10_000 + offset * 10
        reviewer = reviewers[offset % len(reviewers)]
        pr = builder.pull_request(number, minute, title=f"Change {number}")
        review = builder.review(pr, "COMMENTED", reviewer, minute - 5)
        pr["reviews"]["nodes"] = [review]
        first = builder.comment(pr, review, item["comments"][0], reviewer, minute - 5)
        rest = [builder.comment(pr, review, body, ALICE, minute - 4 + index, reply_to=first)
                for index, body in enumerate(item["comments"][1:])]
        resolved, outdated = _THREAD_STATES[item["state"]]
        node = builder.thread(item["path"], [first, *rest], resolved=resolved, outdated=outdated)
        node_ids[item["id"]] = node["id"]
        pr["reviewThreads"]["nodes"] = [node]
        pulls.append(pr)
    return pulls, node_ids


def _simple_threads(b: Builder, pr: Node, review: Node, count: int, comments_each: int, minute: int) -> None:
    for t in range(count):
        first = b.comment(pr, review, f"Please check case {t}.", BOB, minute)
        rest = [b.comment(pr, review, f"Reply {c} to {t}.", ALICE, minute + c + 1, reply_to=first)
                for c in range(comments_each - 1)]
        pr["reviewThreads"]["nodes"].append(b.thread(f"src/module_{t}.py", [first, *rest], resolved=t % 2 == 0))


def hard_cases() -> dict[str, Any]:
    """The fixture corpus: every hard case the ingest must land whole."""
    b = Builder(PUBLIC_REPOSITORY, "Wdg")
    pulls: list[Node] = []

    pr = b.pull_request(1, 100, title="Retry writes 修正 🎉", body="Body with \x07 bell and \u202e bidi override")
    changes = b.review(pr, "CHANGES_REQUESTED", BOB, 50, "Take the lock after the reads.")
    pr["reviews"]["nodes"] = [changes]
    c1 = b.comment(pr, changes, "锁在读取之前获取 — 🔒 slow reads hold it", BOB, 50, outdated=True)
    c2 = b.comment(pr, changes, "Fixed\u202egnp.exe \x1b[31m red \x00 nul", ALICE, 55, reply_to=c1, outdated=True)
    pr["reviewThreads"]["nodes"] = [
        b.thread("orders/writer.py", [c1, c2], resolved=True, outdated=True),
        b.thread("orders/reader.py", [b.comment(pr, changes, "Still outdated, never resolved", BOB, 51)],
                 outdated=True),
        # Two node ids equal when case is folded: both must land, in distinct files.
        b.thread("a.py", [b.comment(pr, changes, "upper", BOB, 52)], node_id="PRRT_kwDOCaseTwin"),
        b.thread("b.py", [b.comment(pr, changes, "lower", BOB, 53)], node_id="PRRT_kwDOcasetwin"),
    ]
    pulls.append(pr)

    pr = b.pull_request(2, 200, title="Deleted author and odd paths", author=None, rollup="FAILURE")
    review = b.review(pr, "COMMENTED", None, 150)
    pr["reviews"]["nodes"] = [review]
    pr["reviewThreads"]["nodes"] = [
        b.thread("docs/read me.md", [b.comment(pr, review, "x" * 70_000, None, 150)]),
        b.thread("../../etc/passwd", [b.comment(pr, review, "path climbs", BOB, 151)]),
    ]
    pulls.append(pr)

    pr = b.pull_request(3, 300, title="A pull request with 130 threads", rollup=None)
    review = b.review(pr, "COMMENTED", BOB, 250)
    pr["reviews"]["nodes"] = [review]
    _simple_threads(b, pr, review, 130, 1, 250)
    pulls.append(pr)

    pr = b.pull_request(4, 400, title="A thread with 120 comments", state="OPEN", rollup="PENDING")
    review = b.review(pr, "COMMENTED", BOB, 350)
    pr["reviews"]["nodes"] = [review]
    _simple_threads(b, pr, review, 1, 120, 350)
    pulls.append(pr)

    pr = b.pull_request(5, 500, title="A dismissed review and 30 reviews", state="CLOSED", rollup="ERROR")
    dismissed = b.review(pr, "DISMISSED", BOT, 450, "auto review, dismissed")
    pr["reviews"]["nodes"] = [dismissed] + [b.review(pr, "APPROVED", ALICE, 451 + i) for i in range(29)]
    pr["reviewThreads"]["nodes"] = [b.thread("ci.yml", [b.comment(pr, dismissed, "bot says", BOT, 450)],
                                             resolved=True)]
    pulls.append(pr)

    for number in range(6, 106):
        pr = b.pull_request(number, 600 + number, title=f"Routine change {number}",
                            state="OPEN" if number % 10 == 0 else "MERGED")
        review = b.review(pr, "APPROVED", BOB, 590 + number)
        pr["reviews"]["nodes"] = [review]
        _simple_threads(b, pr, review, number % 3, 2, 590 + number)
        pulls.append(pr)

    secret = Builder(PRIVATE_REPOSITORY, "Sec")
    private_pr = secret.pull_request(1, 100, title="secret")
    return {
        "repositories": [
            public_repository(PUBLIC_REPOSITORY, pulls),
            {"nameWithOwner": PRIVATE_REPOSITORY, "isPrivate": True, "visibility": "PRIVATE",
             "pullRequests": [private_pr]},
        ]
    }


def generated(count: int, *, seed: int = 7, repository: str = "bench/typical") -> dict[str, Any]:
    """A typical corpus: most pull requests with 0-4 threads of 1-3 comments, a few large ones."""
    rng = random.Random(seed)
    b = Builder(repository, "Bch")
    pulls = []
    for number in range(1, count + 1):
        pr = b.pull_request(number, number * 5, title=f"Change {number}", body="Description. " * rng.randint(1, 20))
        reviews = [b.review(pr, rng.choice(["APPROVED", "COMMENTED", "CHANGES_REQUESTED"]), BOB, number * 5 - 3)
                   for _ in range(rng.randint(0, 3))]
        pr["reviews"]["nodes"] = reviews
        if reviews:
            big = rng.random() < 0.02
            threads = rng.randint(8, 20) if big else rng.choice([0, 0, 1, 1, 2, 3, 4])
            for t in range(threads):
                first = b.comment(pr, reviews[0], f"Comment on {t}: " + "word " * rng.randint(3, 60), BOB,
                                  number * 5 - 2)
                replies = [b.comment(pr, reviews[0], "ok", ALICE, number * 5 - 1, reply_to=first)
                           for _ in range(rng.randint(0, 2))]
                pr["reviewThreads"]["nodes"].append(b.thread(f"pkg/file_{t}.py", [first, *replies],
                                                             resolved=rng.random() < 0.6))
        pulls.append(pr)
    return public_corpus(repository, pulls)


def heavy_tailed(count: int, *, seed: int = 11, repository: str = "bench/heavy") -> dict[str, Any]:
    """A heavy-tailed corpus: 55 % of pull requests with 6-10 threads, 2 % with 100-150 threads, the rest 0-5;
    threads of 1-4 comments, one in a hundred with 100-130 (a long discussion)."""
    rng = random.Random(seed)
    b = Builder(repository, "Hvy")
    pulls = []
    for number in range(1, count + 1):
        minute = number * 5
        pr = b.pull_request(number, minute, title=f"Change {number}", body="Description. " * rng.randint(1, 5))
        reviews = [b.review(pr, rng.choice(["APPROVED", "COMMENTED", "CHANGES_REQUESTED"]), BOB, minute - 3)
                   for _ in range(rng.randint(1, 4))]
        pr["reviews"]["nodes"] = reviews
        shape = rng.random()
        threads = rng.randint(100, 150) if shape < 0.02 else rng.randint(6, 10) if shape < 0.57 else rng.randint(0, 5)
        for t in range(threads):
            replies = rng.randint(100, 130) if rng.random() < 0.01 else rng.randint(0, 3)
            first = b.comment(pr, reviews[0], f"Comment on {t}: " + "word " * rng.randint(3, 20), BOB, minute - 2)
            rest = [b.comment(pr, reviews[0], "ok", ALICE, minute - 1, reply_to=first) for _ in range(replies)]
            pr["reviewThreads"]["nodes"].append(b.thread(f"pkg/file_{t}.py", [first, *rest],
                                                         resolved=rng.random() < 0.6))
        pulls.append(pr)
    return public_corpus(repository, pulls)


def load_fixture() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(hard_cases(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
