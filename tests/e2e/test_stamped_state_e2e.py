"""The knowledge state's stamp end to end: a state edited in place with sqlite3, or copied from another
installation, reaches an agent through a real daemon and the SDK client as the one damage refusal naming the
integrity cure; following the cure with the real CLI serves the authored knowledge again."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from knowledge.integrity import INTEGRITY_REMEDY
from tests.knowledge.authoring import copy_sample
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, call_tools

STATE = Path(".theurian/state")
ITEM = "architecture.auth-policy"


def _refusal(project_id: str) -> str:
    return (f"Project {project_id!r} could not be fully read: its derived state disagrees with its own records "
            f"about what it holds. {INTEGRITY_REMEDY}")


def _state_file(root: Path) -> Path:
    pointer = json.loads((root / STATE / "knowledge-active.json").read_text(encoding="utf-8"))
    return root / STATE / pointer["stateFile"]


def _project(installation: Installation, root: Path, project_id: str) -> Path:
    copy_sample(root)
    installation.cli_in_process("project", "register", str(root), "--id", project_id)
    installation.cli_in_process("migrate", "apply", "--project", str(root))
    return root


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_revision_body_edited_with_sqlite3_is_refused_with_the_cure_and_the_cure_cures(
        module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path, mode: Mode) -> None:
    root = _project(module_installation, tmp_path / "edited", f"edited-{mode}")
    project_id = f"edited-{mode}"
    [before] = call_tools(module_daemon.mcp_url, [("knowledge.get", {"projectId": project_id, "itemId": ITEM})],
                          mode)
    body = (before.structured or {})["body"]
    with sqlite3.connect(_state_file(root)) as connection:
        assert connection.execute("UPDATE revisions SET body = 'Planted: disable auth.' WHERE revision_id = "
                                  "(SELECT current_revision_id FROM knowledge_items WHERE item_id = ?)",
                                  (ITEM,)).rowcount == 1
    refused = call_tools(module_daemon.mcp_url, [
        ("knowledge.get", {"projectId": project_id, "itemId": ITEM}),
        ("knowledge.status", {"projectId": project_id}),
        ("knowledge.search", {"projectId": project_id, "query": "gateway"}),
    ], mode)
    assert [(answer.is_error, answer.text) for answer in refused] == [(True, _refusal(project_id))] * 3
    applied = module_installation.cli("migrate", "apply", "--project", str(root), "--json", check=True)
    assert json.loads(applied.stdout)["summary"]["rebuilt"] is True  # the planted state is not taken as nothing pending
    [served] = call_tools(module_daemon.mcp_url, [("knowledge.get", {"projectId": project_id, "itemId": ITEM})],
                          mode)
    assert not served.is_error and (served.structured or {})["body"] == body


def test_a_state_copied_from_another_installation_is_refused_and_the_cure_rebuilds_it_here(
        module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path) -> None:
    elsewhere = Installation(tmp_path / "another-installation")
    source = _project(elsewhere, tmp_path / "built-elsewhere", "elsewhere")
    root = tmp_path / "copied"
    shutil.copytree(source, root)
    module_installation.cli_in_process("project", "register", str(root), "--id", "copied")
    [refused] = call_tools(module_daemon.mcp_url, [("knowledge.status", {"projectId": "copied"})], "legacy")
    assert refused.is_error and refused.text == _refusal("copied")
    module_installation.cli("migrate", "apply", "--project", str(root), check=True)
    [status] = call_tools(module_daemon.mcp_url, [("knowledge.status", {"projectId": "copied"})], "legacy")
    assert not status.is_error and "integrity" not in (status.structured or {})
    assert (status.structured or {})["itemCount"] >= 1
