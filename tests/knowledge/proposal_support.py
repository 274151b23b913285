"""A project the proposal tests can draft into: a git repository with a fix commit, an applied knowledge state,
a review lake of one candidate thread (and its variants), and a review store built by this test's installation.
Calls go through the daemon's real dispatcher; every successful answer is checked against the proposal schema."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import orjson

import schemas
from knowledge.apply import apply_migrations
from projection.review_build import build_review_store
from serve.dispatch import Dispatcher
from serve.tooling import ServeSettings
from serve.tools import registered_tools
from tests.knowledge.authoring import MigrationWriter
from tests.projection.review_records import pull_request, thread, write_lake
from theurian import registry
from theurian.project import init_project

PROJECT_ID = "demo"
REPOSITORY = "Acme/Order-Service"
PR_KEY = "PR_kwDOAcmeCand01"
THREAD_KEY = "PRRT_kwDOAcmeCand01"
THREAD_PATH = "orders/writer.py"
PROPOSAL_SCHEMA = jsonschema.Draft202012Validator(schemas.load("mcp", "proposal-response.schema.json"))
GIT_ENV = {"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "Test",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": str(root / ".no-global-gitconfig")}
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit_touching(root: Path, *paths: str, message: str = "a change") -> str:
    """A commit in `root`'s repository that changes each of `paths`; its full sha."""
    for relative in paths:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"{message}\n")
    git(root, "add", "--", *paths)
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


@dataclass(frozen=True)
class Shop:
    """The project a test drafts into, and the facts its assertions need."""

    root: Path
    fix_commit: str  # touched THREAD_PATH
    other_commit: str  # touched only an unrelated file
    item_id: str
    revision_id: str


def new_shop(root: Path, *, threads: list[dict[str, Any]] | None = None,
             pulls: list[dict[str, Any]] | None = None) -> Shop:
    """A registered project: git history, one applied item, a lake (the candidate thread unless told) and a store."""
    root.mkdir(parents=True)
    init_project(root)
    git(root, "init", "-q")
    fix = commit_touching(root, THREAD_PATH, message="take the lock after the reads")
    other = commit_touching(root, "README.md", message="unrelated")
    writer = MigrationWriter(root, created_at="2026-09-01T00:00:00Z")
    revision = writer.item("architecture.lock-order", "Locks are taken after reads.", title="Lock order")
    writer.write("lock-order")
    apply_migrations(root)
    write_lake(root, (pulls if pulls is not None else [merged_pull()])
               + (threads if threads is not None else [candidate_thread()]))
    build_review_store(root)
    registry.register(root, PROJECT_ID)
    return Shop(root, fix, other, "architecture.lock-order", revision)


def merged_pull(*, merged: bool = True, rollup: str | None = "SUCCESS", number: int = 42) -> dict[str, Any]:
    record = pull_request(REPOSITORY, number, PR_KEY if number == 42 else f"PR_kwDOAcmeCand{number}")
    record.update(merged=merged, state="MERGED" if merged else "CLOSED", statusCheckRollupState=rollup)
    if not merged:
        record.update(mergedAt=None, mergedBy=None, mergeCommitOid=None)
    return record


def candidate_thread(*, state: str = "resolved", path: str = THREAD_PATH, comments: int = 2,
                     key: str = THREAD_KEY) -> dict[str, Any]:
    record = thread(REPOSITORY, 42, key, bodies=tuple(f"comment {n}" for n in range(max(comments, 1))), path=path,
                    state=state)
    if comments == 0:
        record["comments"] = []
    return record


def candidate_arguments(shop: Shop, **overrides: Any) -> dict[str, Any]:
    return {
        "projectId": PROJECT_ID, "repository": REPOSITORY, "recordKey": THREAD_KEY, "fixCommit": shop.fix_commit,
        "itemId": "reliability.lock-after-reads", "title": "Acquire locks after reads",
        "body": "Take a write lock only after every read it depends on.\n", "kind": "convention",
        "category": "reliability-rule", "owner": "orders-team", "author": "agent-7",
        "evidenceTrail": ["The thread asked to move the lock.", "The fix commit moved it."],
    } | overrides


def call(name: str, arguments: dict[str, Any], *, ceiling: str = "internal") -> dict[str, Any]:
    dispatcher = Dispatcher(registered_tools(), ServeSettings(disclosure_ceiling=ceiling))
    return asyncio.run(dispatcher.call(name, arguments))


def drafted(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The payload of a call that must draft a proposal, checked against the one proposal response schema."""
    result = call(name, arguments)
    assert not result["isError"], result["content"][0]["text"]
    payload: dict[str, Any] = result["structuredContent"]
    PROPOSAL_SCHEMA.validate(payload)
    return payload


def refused(name: str, arguments: dict[str, Any]) -> str:
    result = call(name, arguments)
    assert result["isError"], result
    text: str = result["content"][0]["text"]
    return text


def proposals(root: Path) -> list[str]:
    folder = root / ".theurian" / "proposals"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def evidence_of(root: Path, payload: dict[str, Any]) -> dict[str, Any]:
    document: dict[str, Any] = orjson.loads((root / payload["evidenceFile"]).read_bytes())
    return document


def sha256_of(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
