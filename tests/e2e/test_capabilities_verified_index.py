"""system.capabilities advertises a project's ranked channels only for an index a search would rank with: each
refused index of the stamp's end-to-end cases (another installation's, a forged row's, the earlier format's) is
offered no channel, through a real daemon and the SDK client, while knowledge.search falls back; the rebuild that
cures it makes capabilities name the new build and its channels again, as the search then ranks with them."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_index_stamp_e2e import CASES, POINTER, _built, _index_file
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import call_tools


def _answers(daemon: RunningDaemon, project_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    capabilities, searched = call_tools(daemon.mcp_url, [
        ("system.capabilities", {}), ("knowledge.search", {"projectId": project_id, "query": "auth"})])
    listed = capabilities.valid("system-capabilities-response.schema.json")["knowledgeRetrieval"]["projects"]
    project = next(p for p in listed if p["projectId"] == project_id)
    return project, searched.valid("knowledge-search-response.schema.json")["retrieval"]


def _planted_meta_row(installation: Installation, root: Path, project_id: str) -> Path:
    """One row added to the index's `meta`, which the stamp covers and no query the pointer names reads."""
    _built(installation, root, project_id)
    with closing(sqlite3.connect(_index_file(root), isolation_level=None)) as index:
        index.execute("INSERT INTO meta VALUES ('planted', 'x')")
    return root


REFUSED = {**{case: make for case, (make, _, _) in CASES.items()}, "a planted meta row's": _planted_meta_row}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refused_index_is_offered_no_channel_until_a_rebuild_cures_it(
        module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path, case: str) -> None:
    project_id = f"capabilities-{list(REFUSED).index(case)}"
    root = REFUSED[case](module_installation, tmp_path / "project", project_id)
    offered, searched = _answers(module_daemon, project_id)
    assert searched["indexed"] is False and searched["fallbackReason"] == "index-unreadable"
    assert offered == {"projectId": project_id, "indexBuildId": None, "channels": []}
    module_installation.cli("index", "build", "--project", str(root), check=True)
    offered, searched = _answers(module_daemon, project_id)
    assert searched["indexed"] is True
    build_id = json.loads((root / POINTER).read_text(encoding="utf-8"))["buildId"]
    assert offered["indexBuildId"] == searched["indexBuildId"] == build_id
    assert offered["channels"] == searched["channels"] and offered["channels"]


def test_a_healthy_index_is_offered_with_the_channels_a_search_ranks_with(
        module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path) -> None:
    _built(module_installation, tmp_path / "healthy", "capabilities-healthy")
    for _ in range(2):  # the second from the daemon's verify-once cache: the same answer
        offered, searched = _answers(module_daemon, "capabilities-healthy")
        assert offered["indexBuildId"] == searched["indexBuildId"] is not None
        assert offered["channels"] == searched["channels"]
