"""A write-ahead log beside any of the four stores, through the real CLI and a real daemon and SDK client: SQLite
and DuckDB read one as the file's own rows (read-only included) without changing the file's identity, and no build
leaves one, so each store is refused with its tool's own answer while one lies there, and served again once it is
gone (`theurian.stamped_store.refuse_write_ahead_log`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from knowledge.state import STATE_UNREADABLE
from projection.findings_store import STORE_RELATIVE as FINDINGS_RELATIVE
from projection.review_store import STORE_RELATIVE as REVIEW_RELATIVE
from serve.tools.findings import FINDINGS_UNAVAILABLE_REFUSAL
from serve.tools.review import REVIEW_SEARCH_UNAVAILABLE_REFUSAL
from tests.e2e.review_ingest_support import ingest_env, new_project, small_corpus
from tests.knowledge.proposal_support import commit_touching, git
from tests.support.daemon import RunningDaemon
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PUBLIC_REPOSITORY, load_fixture
from tests.support.installation import Installation
from tests.support.mcp_client import call_tool
from theurian.cli.pasteable import with_project
from theurian.stamped_store import DUCKDB_WAL_SUFFIX, SQLITE_WAL_SUFFIX, WAL_BESIDE, wal_path

REPO = Path(__file__).resolve().parents[2]
STATE = Path(".theurian/state")


@pytest.fixture(scope="module")
def synced(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with all four stores built by `theurian sync` (never registered: each test registers a copy)."""
    root = new_project(module_installation, tmp_path_factory.mktemp("wal") / "synced", PUBLIC_REPOSITORY)
    for folder in ("migrations", "knowledge"):
        shutil.copytree(REPO / "fixtures/knowledge/sample/.theurian" / folder, root / ".theurian" / folder)
    git(root, "init", "-q")
    commit_touching(root, "a.txt", message="first\n\nReview-Finding: security HIGH — tokens compared with ==")
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        done = module_installation.cli("sync", "--project", str(root), "--max-wait", "0", extra_env=ingest_env(fake))
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def _registered_copy(installation: Installation, synced: Path, root: Path) -> Path:
    shutil.copytree(synced, root, symlinks=True)
    installation.cli_in_process("project", "register", str(root), "--id", root.name)
    return root


def _pointed(root: Path, pointer: str, key: str) -> Path:
    return root / STATE / str(json.loads((root / STATE / pointer).read_text(encoding="utf-8"))[key])


def _cli_refusal(installation: Installation, root: Path, *words: str) -> str:
    """The one line the command run with `--project ROOT` refuses with: a tool's refusal, its cures carrying the
    project (`theurian.cli.pasteable`)."""
    printed = installation.cli(*words, "--project", str(root))
    assert printed.returncode == 1 and printed.stdout == ""
    [line] = printed.stderr.splitlines()
    return line.removeprefix("theurian: ")


def _call(daemon: RunningDaemon, tool: str, root: Path, **arguments: Any) -> Any:
    return call_tool(daemon.mcp_url, tool, {"projectId": root.name} | arguments)


# (tool, its command's words, the store, its engine's log suffix, the tool's one refusal for a store it cannot serve)
SERVED_STORES = {
    "review store": ("review.search", ("review", "search"), REVIEW_RELATIVE, DUCKDB_WAL_SUFFIX,
                     REVIEW_SEARCH_UNAVAILABLE_REFUSAL),
    "findings store": ("review.findings", ("findings", "list"), FINDINGS_RELATIVE, SQLITE_WAL_SUFFIX,
                       FINDINGS_UNAVAILABLE_REFUSAL),
}


@pytest.mark.parametrize("store", list(SERVED_STORES))
def test_a_wal_beside_a_review_side_store_is_refused_by_its_tool_and_its_command_until_it_is_gone(
        module_installation: Installation, module_daemon: RunningDaemon, synced: Path, tmp_path: Path,
        store: str) -> None:
    tool, words, relative, suffix, refusal = SERVED_STORES[store]
    root = _registered_copy(module_installation, synced, tmp_path / f"wal-{store.replace(' ', '-')}")
    assert not _call(module_daemon, tool, root).is_error  # verified (and perhaps remembered) first
    wal = wal_path(root / relative, suffix)
    wal.write_bytes(b"")  # an empty log changes no row: the findings store was served as it was before the refusal
    refused = _call(module_daemon, tool, root)
    assert refused.is_error and refused.text == refusal
    assert _cli_refusal(module_installation, root, *words) == with_project(refusal, root)
    wal.unlink()
    assert not _call(module_daemon, tool, root).is_error


def test_a_wal_beside_the_knowledge_state_is_refused_by_every_knowledge_tool_and_the_cure_cures(
        module_installation: Installation, module_daemon: RunningDaemon, synced: Path, tmp_path: Path) -> None:
    root = _registered_copy(module_installation, synced, tmp_path / "wal-state")
    assert not _call(module_daemon, "knowledge.status", root).is_error
    wal_path(_pointed(root, "knowledge-active.json", "stateFile"), SQLITE_WAL_SUFFIX).write_bytes(b"")
    answers = [_call(module_daemon, "knowledge.status", root),
               _call(module_daemon, "knowledge.search", root, query="retry"),
               _call(module_daemon, "knowledge.get", root, itemId="architecture.auth-policy")]
    assert [(answer.is_error, answer.text) for answer in answers] == [(True, STATE_UNREADABLE)] * 3
    assert _cli_refusal(module_installation, root, "knowledge", "search", "retry") == with_project(STATE_UNREADABLE,
                                                                                                   root)
    applied = module_installation.cli("migrate", "apply", "--project", str(root), "--json", check=True)
    assert json.loads(applied.stdout)["summary"]["rebuilt"] is True  # a state with a log beside it is not kept
    assert not _call(module_daemon, "knowledge.status", root).is_error


def test_a_wal_beside_the_index_is_named_by_index_status_and_knowledge_search_falls_back(
        module_installation: Installation, module_daemon: RunningDaemon, synced: Path, tmp_path: Path) -> None:
    root = _registered_copy(module_installation, synced, tmp_path / "wal-index")
    ranked = _call(module_daemon, "knowledge.search", root, query="retry").structured
    assert ranked["retrieval"]["indexed"] is True
    wal = wal_path(_pointed(root, "knowledge-index.json", "indexFile"), SQLITE_WAL_SUFFIX)
    wal.write_bytes(b"")
    status = module_installation.cli("index", "status", "--project", str(root))
    assert status.returncode == 1 and WAL_BESIDE in status.stdout
    fallen = _call(module_daemon, "knowledge.search", root, query="retry").structured
    assert fallen["retrieval"]["indexed"] is False and fallen["retrieval"]["fallbackReason"] == "index-unreadable"
    wal.unlink()
    assert _call(module_daemon, "knowledge.search", root, query="retry").structured["retrieval"]["indexed"] is True
