"""Evidence lakes for review-store tests, written through the evidence writer from the bundled sample records."""

from __future__ import annotations

import copy
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import orjson

from evidence.lake import Lake
from evidence.records import repository_folder
from projection.review_reuse import RACY_NS
from projection.review_store import store_path

FIXTURE_LAKE = Path(__file__).resolve().parents[2] / "fixtures" / "evidence"
FIXTURE_REPOSITORY = "Acme/Order-Service"


def _sample(kind: str) -> dict[str, Any]:
    folder = FIXTURE_LAKE / repository_folder(FIXTURE_REPOSITORY) / kind
    document: dict[str, Any] = orjson.loads(sorted(folder.iterdir())[0].read_bytes())
    return document


def pull_request(repository: str, number: int, key: str, *, title: str = "a title", body: str = "",
                 author_id: str = "U_author") -> dict[str, Any]:
    record = copy.deepcopy(_sample("pull-request"))
    record.update(repository=repository, pullRequest=number, recordKey=key, title=title, body=body,
                  sourceUri=f"https://github.com/{repository}/pull/{number}")
    record["author"] = {"id": author_id, "login": f"login-{author_id}", "type": "User"}
    return record


def review(repository: str, number: int, key: str, *, body: str = "", author_id: str = "U_author") -> dict[str, Any]:
    record = copy.deepcopy(_sample("review-submission"))
    record.update(repository=repository, pullRequest=number, recordKey=key, body=body,
                  sourceUri=f"https://github.com/{repository}/pull/{number}#pullrequestreview-1")
    record["author"] = {"id": author_id, "login": f"login-{author_id}", "type": "User"}
    return record


def thread(repository: str, number: int, key: str, *, bodies: tuple[str, ...] = ("a comment",),
           path: str = "src/app.py", state: str = "open", author_id: str = "U_author") -> dict[str, Any]:
    record = copy.deepcopy(_sample("review-thread"))
    template = record["comments"][0]
    comments = []
    for index, body in enumerate(bodies):
        comment = copy.deepcopy(template)
        comment.update(body=body, recordKey=f"{key}_c{index}", replyToKey=None)
        comment.pop("missingUpstreamSince", None)
        comment["author"] = {"id": author_id if index == 0 else "U_replier", "login": "someone", "type": "User"}
        comments.append(comment)
    record.update(repository=repository, pullRequest=number, recordKey=key, comments=comments, path=path,
                  state=state, sourceUri=f"https://github.com/{repository}/pull/{number}#discussion_r1")
    return record


def write_lake(root: Path, records: list[dict[str, Any]]) -> list[str]:
    """Write `records` into the project's lake through the evidence writer; return their record paths."""
    lake = Lake(root)
    return [lake.put(record).record_path for record in records]


def copy_fixture_lake(root: Path) -> None:
    shutil.copytree(FIXTURE_LAKE, root / ".theurian" / "review", dirs_exist_ok=True)


def tamper_with_store(root: Path, statements: Sequence[str]) -> None:
    """Run `statements` on a copy of the project's review store and put it in place, as a planted or damaged file
    would arrive (the build's own file is never written in place)."""
    live = store_path(root)
    copy = live.with_name("tampered.duckdb")
    shutil.copy(live, copy)
    with duckdb.connect(str(copy)) as connection:
        for statement in statements:
            connection.execute(statement)
    os.replace(copy, live)


def new_project(root: Path) -> Path:
    (root / ".theurian").mkdir(parents=True)
    return root


def settle(root: Path) -> None:
    """Wait (bounded) until every record file is older than the incremental build's racy window, so the next build
    records all of them (`projection.review_reuse.RACY_NS`)."""
    newest = max(max(p.lstat().st_mtime_ns, p.lstat().st_ctime_ns) for p in (root / ".theurian/review").rglob("*.json"))
    deadline = time.monotonic() + 10
    while time.time_ns() <= newest + RACY_NS:
        assert time.monotonic() < deadline
        time.sleep(0.05)  # polling the clock, bounded by the deadline above
