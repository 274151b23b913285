"""A write-intent tool over a real daemon and the SDK's MCP client, its project's `.theurian/proposals/` refusing
every write (as a read-only file system does; `tests.support.refused_writes` in the daemon's own process, since
these tests may run as root): the agent reads the clear refusal naming the folder project-relative, never the
internal fault nor the project's absolute path, and the daemon's log holds one line naming it for the operator."""

from __future__ import annotations

import errno
from pathlib import Path

from serve.refusal import INTERNAL_FAULT_REFUSAL
from tests.support.daemon import running_daemon
from tests.support.installation import Installation
from tests.support.mcp_client import call_tools
from tests.support.refused_writes import refusing_binary

DRAFT = {"projectId": "p", "author": "agent-7", "description": "alias it",
         "operations": [{"op": "addAlias", "alias": "lo", "itemId": "architecture.lock-order"}]}


def test_an_agent_is_told_the_proposals_folder_is_read_only_and_the_log_names_it(
        installation: Installation, tmp_path: Path) -> None:
    root = installation.new_project_in_process(tmp_path / "p", "p")
    proposals = root / ".theurian" / "proposals"
    proposals.mkdir()
    binary = refusing_binary(tmp_path / "theurian-refusing", proposals, errno.EROFS)
    with running_daemon(installation, binary=binary) as daemon:
        answer, = call_tools(daemon.mcp_url, [("knowledge.generateMigrationDraft", DRAFT)])
        log = daemon.log_once_it_holds("outcome=refused")
    # Said before: INTERNAL_FAULT_REFUSAL, and a PermissionError's summary in the log.
    assert answer.is_error and answer.text != INTERNAL_FAULT_REFUSAL
    assert answer.text == (
        "Nothing was written: cannot write in .theurian/proposals/: the file system is read-only; remount it "
        "read-write (`findmnt -T .theurian/proposals` names the mount), or work on a copy on a writable file "
        "system. The operator must cure this folder (the commands run in the project's root folder); then make "
        "the call again.")
    assert str(root.resolve()) not in answer.text
    assert list(proposals.iterdir()) == []
    written, = [line for line in log.splitlines() if "wrote nothing" in line]
    assert written.endswith(
        f"WARNING tool knowledge.generateMigrationDraft wrote nothing: cannot write in {proposals.resolve()}/: the "
        f"file system is read-only; remount it read-write (`findmnt -T {proposals.resolve()}` names the mount), or "
        "work on a copy on a writable file system")
    assert "call tool=knowledge.generateMigrationDraft project=p outcome=refused" in log
    assert "Traceback" not in log and "failed" not in log
