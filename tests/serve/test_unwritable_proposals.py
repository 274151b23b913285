"""A write-intent tool whose proposal folder the file system will not let it write (permission denied, an immutable
flag, a read-only file system, a full disk, a quota) is refused as the operator's condition to cure, named
project-relative with `theurian.disk_faults`' cure, and nothing is left behind: never the internal-fault refusal.
The folder refuses through `tests.support.refused_writes` (these tests may run as root, whom a mode does not stop)."""

from __future__ import annotations

import errno
import logging
import os
import pwd
from pathlib import Path
from typing import Any

import pytest

from serve.errors import ToolRefusal
from serve.local_call import call_locally
from serve.refusal import INTERNAL_FAULT_REFUSAL
from serve.tooling import ServeSettings, ToolKind
from serve.tools import registered_tools
from tests.knowledge.proposal_support import call, new_shop
from tests.serve.test_proposal_tools_reach_no_canonical_write import _arguments
from tests.support.installation import Installation
from tests.support.refused_writes import refusing

DRAFT = {"projectId": "p", "author": "agent-7", "description": "alias it",
         "operations": [{"op": "addAlias", "alias": "lo", "itemId": "architecture.lock-order"}]}
USER = pwd.getpwuid(os.geteuid()).pw_name
# (errno, whether the error names a path, the agent's words after "Nothing was written: cannot write in
# .theurian/proposals/: ")
CASES = [
    (errno.EACCES, True, f"permission denied to this user ({USER}); as root or its owner, `chown -R {USER} "
                         ".theurian/proposals` gives it to this user (or run theurian as the user who owns it)"),
    (errno.EPERM, True, "the operation is not permitted (an immutable or append-only flag refuses even root: "
                        "`lsattr -d .theurian/proposals` shows it); as root, `chattr -i -a .theurian/proposals` "
                        "clears it"),
    (errno.EROFS, True, "the file system is read-only; remount it read-write (`findmnt -T .theurian/proposals` "
                        "names the mount), or work on a copy on a writable file system"),
    (errno.ENOSPC, False, "no space left on the device; free space there (`df -h .theurian/proposals` shows what "
                          "is left), then run the command again"),
    (errno.EDQUOT, True, "the disk quota is exceeded; free space within the disk quota or have it raised (`quota "
                         "-s` shows it), then run the command again"),
]
TAIL = ". The operator must cure this folder (the commands run in the project's root folder); then make the call again."


@pytest.fixture
def root(installation: Installation, tmp_path: Path) -> Path:
    project = installation.new_project_in_process(tmp_path / "p", "p")
    (project / ".theurian" / "proposals").mkdir()
    return project


@pytest.mark.parametrize(("code", "named", "said"), CASES, ids=[errno.errorcode[c] for c, _, _ in CASES])
def test_an_unwritable_proposal_folder_is_refused_with_its_cure_and_nothing_is_written(
        root: Path, code: int, named: bool, said: str) -> None:
    # Said before: the internal-fault refusal ("The daemon failed while answering this call; …").
    with refusing(root / ".theurian" / "proposals", code, named=named), pytest.raises(ToolRefusal) as refused:
        call_locally("knowledge.generateMigrationDraft", DRAFT, ServeSettings("internal"))
    assert refused.value.message == f"Nothing was written: cannot write in .theurian/proposals/: {said}{TAIL}"
    assert str(root.resolve()) not in refused.value.message
    assert list((root / ".theurian" / "proposals").iterdir()) == []


def test_a_file_the_draft_cannot_make_in_its_own_folder_names_the_proposals_folder_not_the_new_id(
        root: Path) -> None:
    # The proposal's own folder was made, then its first file refused: that folder is removed, so the place named
    # is the one that exists (never a proposal id an agent could go looking for).
    proposals = root / ".theurian" / "proposals"
    with refusing(proposals, errno.EROFS, events=("open",)), pytest.raises(ToolRefusal) as refused:
        call_locally("knowledge.generateMigrationDraft", DRAFT, ServeSettings("internal"))
    assert refused.value.message == f"Nothing was written: cannot write in .theurian/proposals/: {CASES[2][2]}{TAIL}"
    assert list(proposals.iterdir()) == []


def test_every_write_intent_tool_is_refused_so_and_the_log_names_the_folder_absolutely(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    shop = new_shop(tmp_path / "shop")
    proposals = shop.root / ".theurian" / "proposals"
    proposals.mkdir(exist_ok=True)
    writers = [tool.name for tool in registered_tools() if tool.kind is ToolKind.WRITE_INTENT]
    assert len(writers) == 3
    for name in writers:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="theurian.serve"), refusing(proposals, errno.EACCES):
            result = call(name, _arguments(shop)[name])
        assert result["isError"], name
        text = result["content"][0]["text"]
        assert text != INTERNAL_FAULT_REFUSAL
        assert text.startswith("Nothing was written: cannot write in .theurian/proposals/: permission denied"), name
        lines = [record.getMessage() for record in caplog.records]
        assert lines == [f"tool {name} wrote nothing: cannot write in {proposals.resolve()}/: permission denied to "
                         f"this user ({USER}); as root or its owner, `chown -R {USER} {proposals.resolve()}` gives "
                         "it to this user (or run theurian as the user who owns it)"], name
        assert list(proposals.iterdir()) == []


def test_a_read_tool_meeting_an_os_error_stays_the_internal_fault(root: Path) -> None:
    # Only a write-intent tool's write is the operator's folder to cure; anything else stays a fault for the log.
    with pytest.MonkeyPatch.context() as patch:
        import serve.tools.system as system

        def broken(*_: Any, **__: Any) -> Any:
            raise PermissionError(errno.EACCES, "Permission denied", str(root))

        patch.setattr(system, "capabilities_of", broken)
        assert call("system.capabilities", {})["content"][0]["text"] == INTERNAL_FAULT_REFUSAL
