"""The labelled recurring-concern set (fixtures/concerns): its threads as lake records (each in its own merged, CI-green
pull request) or as GitHub pull requests for the loopback fake, and the labels the clustering is scored against."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.projection.review_records import pull_request, thread
from tests.support.github_corpus import Node, one_thread_pull_requests, user

FOLDER = Path(__file__).resolve().parents[2] / "fixtures" / "concerns"
REVIEWERS = tuple(user(f"reviewer-{index}", f"U_kgDOReviewer{index}") for index in range(3))


def threads() -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((FOLDER / "threads.json").read_text(encoding="utf-8"))["threads"]
    return loaded


def record_key(thread_id: str) -> str:
    return f"PRRT_concern_{thread_id}"


def created_at(position: int) -> str:
    """Thread `position`'s (0-based) first comment time: one day apart, in fixture order."""
    return f"2026-0{1 + position // 28}-{1 + position % 28:02d}T10:00:00Z"


def thread_record(item: dict[str, Any], number: int, position: int) -> dict[str, Any]:
    record = thread(item["repository"], number, record_key(item["id"]), bodies=tuple(item["comments"]),
                    path=item["path"], state=item["state"], author_id=f"U_reviewer{position % 3}")
    for comment in record["comments"]:
        comment["createdAt"] = comment["updatedAt"] = created_at(position)
    return record


def merged_pull(repository: str, number: int) -> dict[str, Any]:
    record = pull_request(repository, number, f"PR_concern_{repository.replace('/', '_')}_{number}")
    record.update(state="MERGED", merged=True, statusCheckRollupState="SUCCESS")
    return record


def lake_records(only: set[str] | None = None) -> list[dict[str, Any]]:
    """Each thread (of `only`, by id, when given) as a review-thread record of its own merged, CI-green pull
    request, numbered by its position in the fixture."""
    records = []
    for position, item in enumerate(threads()):
        if only is not None and item["id"] not in only:
            continue
        number = position + 1
        records += [merged_pull(item["repository"], number), thread_record(item, number, position)]
    return records


def labels() -> dict[str, tuple[str | None, str, str]]:
    """record key -> (concern or None, half, role)."""
    return {record_key(item["id"]): (item["concern"], item["half"], item["role"]) for item in threads()}


def pull_requests(repository: str, first_number: int, prefix: str = "Con") -> tuple[list[Node], dict[str, str]]:
    """Each thread as one merged, CI-green pull request of `repository` holding it (GitHub's GraphQL shape), and
    the map from each labelled thread id to the node id GitHub gives its thread."""
    return one_thread_pull_requests(threads(), repository, first_number, prefix, REVIEWERS)
