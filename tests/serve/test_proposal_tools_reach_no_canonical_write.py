"""No registered tool reaches a canonical write (ADR-0013), and each write-intent tool holds only the draft facade.

The proof runs every tool the daemon registers — whatever the set is, not a list someone remembered — through the
real dispatcher against a project with an applied state, a built review store and a git history, while a Python
audit hook records every file the process opens for writing, every rename, replace, link, removal and directory
creation, and every SQLite connection not opened read-only. Canonical means `.theurian/migrations/`,
`.theurian/knowledge/`, `.theurian/state/` and the evidence lake: none may appear in the record, and the bytes of
every file under them must be unchanged. The write-intent tools must draft successfully while recorded, so the
recorder is shown to see their writes under `.theurian/proposals/` — an empty record from a blind hook proves
nothing.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from knowledge.proposals import DraftFacade
from serve.tooling import ToolKind
from serve.tools import registered_tools
from serve.tools.system import capabilities_of
from tests.knowledge.proposal_support import (
    PROJECT_ID,
    REPOSITORY,
    Shop,
    call,
    candidate_arguments,
    new_shop,
)
from tests.support.schema_values import minimal_arguments

CANONICAL = (".theurian/migrations", ".theurian/knowledge", ".theurian/state", ".theurian/review")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_MUTATING_EVENTS = {"os.rename", "os.replace", "os.remove", "os.rmdir", "os.mkdir", "os.link", "os.symlink",
                    "os.truncate", "shutil.rmtree", "shutil.move", "os.chmod"}
_recording: list[list[str]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _recording:
        return
    if event == "open" and len(args) >= 3:
        path, mode, flags = args[0], args[1], args[2]
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS)
        if writes and isinstance(path, str | bytes | os.PathLike):
            _recording[-1].append(os.path.abspath(os.fsdecode(path)))
    elif event in _MUTATING_EVENTS:
        _recording[-1].extend(os.path.abspath(os.fsdecode(a)) for a in args if isinstance(a, str | bytes))
    elif event == "sqlite3.connect" and args and "mode=ro" not in str(args[0]):
        _recording[-1].append(os.path.abspath(str(args[0])))


sys.addaudithook(_audit)


@contextmanager
def recorded_writes() -> Iterator[list[str]]:
    written: list[str] = []
    _recording.append(written)
    try:
        yield written
    finally:
        _recording.pop()


def _snapshot(root: Path) -> dict[str, str]:
    files = {}
    for folder in CANONICAL:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file():
                files[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


def _arguments(shop: Shop) -> dict[str, dict[str, Any]]:
    """Arguments that reach each known tool's main path; any other registered tool gets its schema's minimum."""
    known: dict[str, dict[str, Any]] = {
        "knowledge.search": {"projectId": PROJECT_ID, "query": "lock"},
        "knowledge.get": {"projectId": PROJECT_ID, "itemId": shop.item_id},
        "knowledge.status": {"projectId": PROJECT_ID},
        "knowledge.proposeChange": {"projectId": PROJECT_ID, "itemId": shop.item_id,
                                    "expectedRevision": shop.revision_id, "body": "new body\n", "author": "a"},
        "knowledge.generateMigrationDraft": {"projectId": PROJECT_ID, "author": "a", "description": "alias it",
                                             "operations": [{"op": "addAlias", "alias": "lo",
                                                             "itemId": shop.item_id}]},
        "review.generateKnowledgeCandidate": candidate_arguments(shop),
        "review.search": {"projectId": PROJECT_ID, "repository": REPOSITORY},
        "review.findings": {"projectId": PROJECT_ID},
        "project.list": {},
        "system.capabilities": {},
    }
    return {tool.name: known.get(tool.name) or minimal_arguments(tool.input_schema, PROJECT_ID)
            for tool in registered_tools()}


def test_no_registered_tool_reaches_a_canonical_write(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    root = str(shop.root.resolve())
    canonical = tuple(os.path.join(root, folder) for folder in CANONICAL)
    proposals = os.path.join(root, ".theurian", "proposals")
    before = _snapshot(shop.root)
    for tool in registered_tools():
        with recorded_writes() as written:
            result = call(tool.name, _arguments(shop)[tool.name])
        reached = [path for path in written if path.startswith(canonical)]
        assert reached == [], f"{tool.name} reached a canonical write: {reached}"
        assert _snapshot(shop.root) == before, f"{tool.name} changed a canonical file"
        if tool.kind is ToolKind.WRITE_INTENT:
            assert not result["isError"], (tool.name, result["content"][0]["text"])
            assert any(path.startswith(proposals) for path in written), f"the recorder did not see {tool.name}"


def test_the_recorder_sees_a_canonical_write_when_one_happens(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    from knowledge.proposal_lifecycle import accept_proposal

    payload = call("knowledge.generateMigrationDraft", _arguments(shop)["knowledge.generateMigrationDraft"])
    with recorded_writes() as written:
        accept_proposal(shop.root, payload["structuredContent"]["proposalId"])
    migrations = os.path.join(str(shop.root.resolve()), ".theurian", "migrations")
    assert any(path.startswith(migrations) for path in written)


def test_the_draft_facade_reaches_only_the_two_draft_entries(tmp_path: Path) -> None:
    facade = DraftFacade(tmp_path)
    assert [name for name in dir(facade) if not name.startswith("_")] == ["draft_content", "draft_operations"]
    assert not hasattr(facade, "__dict__")  # __slots__: nothing can be hung on it
    assert set(DraftFacade.__slots__) == {"_root"}


def test_writes_are_reported_because_write_intent_tools_are_registered() -> None:
    tools = registered_tools()
    intent = sorted(tool.name for tool in tools if tool.kind is ToolKind.WRITE_INTENT)
    assert intent == ["knowledge.generateMigrationDraft", "knowledge.proposeChange",
                      "review.generateKnowledgeCandidate"]
    assert capabilities_of(tools)["writeTools"] is True
    without = [tool for tool in tools if tool.kind is not ToolKind.WRITE_INTENT]
    assert capabilities_of(without)["writeTools"] is False



def test_a_proposals_folder_redirected_into_the_knowledge_folder_is_refused_and_nothing_is_written(
        tmp_path: Path) -> None:
    # `.theurian/proposals -> knowledge` stays inside the project, so project containment alone let a draft land
    # in `.theurian/knowledge/<ULID>/`: a write-intent tool writing beside the canonical sources.
    shop = new_shop(tmp_path / "shop")
    proposals = shop.root / ".theurian" / "proposals"
    if proposals.exists():
        os.rename(proposals, shop.root / "old-proposals")
    proposals.symlink_to("knowledge")
    root = str(shop.root.resolve())
    canonical = tuple(os.path.join(root, folder) for folder in CANONICAL)
    before = _snapshot(shop.root)
    for tool in registered_tools():
        if tool.kind is not ToolKind.WRITE_INTENT:
            continue
        with recorded_writes() as written:
            result = call(tool.name, _arguments(shop)[tool.name])
        assert result["isError"], (tool.name, result)
        text = result["content"][0]["text"]
        assert text.startswith("PATH_ESCAPE_REFUSAL: .theurian/proposals "), (tool.name, text)
        assert "a symlink redirects it" in text and "plain folder" in text, (tool.name, text)
        assert [path for path in written if path.startswith(canonical)] == [], tool.name
        assert _snapshot(shop.root) == before, tool.name
