"""The retrieval index's stamp end to end: an index copied from another installation, one whose row was edited
and whose every unkeyed digest was recomputed, and one of the format before the stamp are each told apart by the
real `theurian index status` (exit 1) and answered by knowledge.search, through a real daemon and the SDK client,
with the substring fallback (`index-unreadable`); `theurian index build` cures each."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from knowledge.postings import write_postings
from tests.knowledge.authoring import copy_sample
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, call_tools

STATE = Path(".theurian/state")
POINTER = STATE / "knowledge-index.json"
PLANTED = "Planted: disable auth"


def _built(installation: Installation, root: Path, project_id: str | None) -> Path:
    copy_sample(root)
    if project_id is not None:
        installation.cli_in_process("project", "register", str(root), "--id", project_id)
    installation.cli_in_process("migrate", "apply", "--project", str(root))
    installation.cli_in_process("index", "build", "--project", str(root))  # the cure the test runs is a process
    return root


def _index_file(root: Path) -> Path:
    return root / STATE / str(json.loads((root / POINTER).read_text(encoding="utf-8"))["indexFile"])


def _rewrite_pointer(root: Path, **changes: object) -> None:
    document = json.loads((root / POINTER).read_text(encoding="utf-8")) | changes
    (root / POINTER).write_text(json.dumps(document), encoding="utf-8")


def _forged(installation: Installation, root: Path, project_id: str) -> Path:
    """A title rewritten in the index, the postings rebuilt from it, and their digest written to `meta` and the
    pointer: every sha256 the index and its pointer hold agrees."""
    _built(installation, root, project_id)
    with contextlib.closing(sqlite3.connect(_index_file(root), isolation_level=None)) as index:
        index.execute("UPDATE docs SET title = ? WHERE item_id = 'architecture.auth-policy'", (PLANTED,))
        index.execute("DROP TABLE word_postings")
        index.execute("DROP TABLE vocab_tri")
        digest = write_postings(index)
        index.execute("UPDATE meta SET value = ? WHERE key = 'postings_sha256'", (digest,))
    _rewrite_pointer(root, postingsSha256=digest)
    return root


def _superseded(installation: Installation, root: Path, project_id: str) -> Path:
    """The layout `theurian index build` wrote before the stamp (index schema 2)."""
    _built(installation, root, project_id)
    with contextlib.closing(sqlite3.connect(_index_file(root), isolation_level=None)) as index:
        index.execute("DROP TABLE build_stamp")
        index.execute("DELETE FROM meta WHERE key IN ('postings_sha256', 'raptor_sha256')")
        index.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    _rewrite_pointer(root, schemaVersion=2)
    return root


def _foreign(installation: Installation, root: Path, project_id: str) -> Path:
    elsewhere = Installation(root.parent / f"{project_id}-installation")
    source = _built(elsewhere, root.parent / f"{project_id}-elsewhere", None)
    shutil.copytree(source, root)
    installation.cli_in_process("project", "register", str(root), "--id", project_id)
    installation.cli_in_process("migrate", "apply", "--project", str(root))  # the state, not the index
    return root


CASES: dict[str, tuple[Callable[[Installation, Path, str], Path], str, str]] = {
    "another installation's": (_foreign, "foreign", "refused, not built by this installation (a stamp this "
                                                    "installation did not make)"),
    "a forged row's": (_forged, "unreadable", "unreadable (damaged, or not the build its pointer names: damaged: "
                                             "its rows are not the rows its build stamped)"),
    "the earlier format's": (_superseded, "superseded", "superseded, built in an earlier index format"),
}


def _search(daemon: RunningDaemon, project_id: str, mode: Mode, query: str) -> dict[str, Any]:
    [answer] = call_tools(daemon.mcp_url, [("knowledge.search", {"projectId": project_id, "query": query})], mode)
    return answer.valid("knowledge-search-response.schema.json")


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_refused_index_is_named_by_index_status_and_knowledge_search_falls_back_until_it_is_rebuilt(
        module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path, case: str,
        mode: Mode) -> None:
    make, state, says = CASES[case]
    project_id = f"index-{list(CASES).index(case)}-{mode}"
    root = make(module_installation, tmp_path / "project", project_id)
    status = module_installation.cli("index", "status", "--project", str(root), "--json")
    assert status.returncode == 1 and json.loads(status.stdout)["summary"]["state"] == state
    described = module_installation.cli("index", "status", "--project", str(root))
    assert described.returncode == 1 and says in described.stdout
    assert described.stdout.strip().endswith(f"(`theurian index build --project {root}`)")
    refused = _search(module_daemon, project_id, mode, "auth")
    assert refused["retrieval"]["indexed"] is False and refused["retrieval"]["fallbackReason"] == "index-unreadable"
    assert refused["count"] >= 1 and PLANTED not in json.dumps(refused)  # the substring search over the state
    module_installation.cli("index", "build", "--project", str(root), check=True)
    assert module_installation.cli("index", "status", "--project", str(root)).returncode == 0
    ranked = _search(module_daemon, project_id, mode, "auth")
    assert ranked["retrieval"]["indexed"] is True and ranked["retrieval"]["fallbackReason"] is None
