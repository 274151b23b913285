"""The labelled review-thread set (fixtures/similar): its threads as lake records or as GitHub pull requests, and
its situations with the threads each should find."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.projection.review_records import thread
from tests.support.github_corpus import Node, one_thread_pull_requests

FOLDER = Path(__file__).resolve().parents[2] / "fixtures" / "similar"


@dataclass(frozen=True)
class Situation:
    id: str
    half: str  # "tune" or "held-out"
    text: str
    relevant: frozenset[str]  # the record keys of the threads that answer it; empty: nothing should


def threads() -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((FOLDER / "threads.json").read_text(encoding="utf-8"))["threads"]
    return loaded


def record_key(thread_id: str) -> str:
    return f"PRRT_similar_{thread_id}"


def situations() -> list[Situation]:
    by_concern: dict[str, set[str]] = {}
    for item in threads():
        if item["concern"] is not None:
            by_concern.setdefault(item["concern"], set()).add(record_key(item["id"]))
    document = json.loads((FOLDER / "situations.json").read_text(encoding="utf-8"))
    return [Situation(s["id"], s["half"], s["text"], frozenset(by_concern.get(s["concern"], set())) if s["concern"]
                      else frozenset()) for s in document["situations"]]


def lake_records() -> list[dict[str, Any]]:
    """Each thread as a review-thread record of its own pull request (numbered by its position)."""
    return [
        thread(item["repository"], number, record_key(item["id"]), bodies=tuple(item["comments"]), path=item["path"],
               state=item["state"])
        for number, item in enumerate(threads(), start=1)
    ]


def pull_requests(repository: str, first_number: int, prefix: str = "Sim") -> tuple[list[Node], dict[str, str]]:
    """Each thread as one merged pull request of `repository` holding it (GitHub's GraphQL shape, for the fake),
    and the map from each labelled thread id to the node id GitHub gives its thread."""
    return one_thread_pull_requests(threads(), repository, first_number, prefix)
