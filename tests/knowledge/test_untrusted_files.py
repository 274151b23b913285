"""What a planted or damaged file under `.theurian/` does to the knowledge side: a refusal for that project, never
a wait, a crash or a disclosure. Found by an independent audit; each case hung, crashed or leaked before."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from knowledge import migrations, proposal_lifecycle, state
from knowledge.apply import apply_migrations, migration_status
from knowledge.errors import MigrationInvalidError, ProposalError, StateBusyError
from knowledge.index_pointer import INDEX_POINTER_NAME
from knowledge.proposal_lifecycle import DAMAGED, PENDING, accept_proposal, list_proposals, reject_proposal
from knowledge.state import MAX_POINTER_BYTES, POINTER_NAME
from tests.knowledge.authoring import MigrationWriter
from tests.knowledge.proposal_support import PROJECT_ID, call, drafted, new_shop, refused
from theurian.text import MAX_SHOWN_CHARS

STATE = ".theurian/state"
WAIT_SECONDS = 20.0


def _finishes(work: Callable[[], Any]) -> Any:
    """`work()`'s result (or what it raised), asserting it ended at all: on a FIFO, the old reads waited forever."""
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, work()))
        except BaseException as exc:  # handed to the test's thread below
            outcome.append((False, exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(WAIT_SECONDS)
    assert outcome, "still waiting: the file was opened as if it were a regular file"
    returned, value = outcome[0]
    if not returned:
        raise value
    return value


def _fifo_in_place_of(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)  # nobody writes to it: a blocking open for reading waits forever


def test_a_fifo_at_the_state_pointer_is_a_refusal_for_that_project(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    _fifo_in_place_of(shop.root / STATE / POINTER_NAME)
    text = _finishes(lambda: refused("knowledge.status", {"projectId": PROJECT_ID}))
    assert "pointer is damaged" in text


def test_a_fifo_at_the_state_database_the_pointer_names_is_a_refusal(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    pointer = orjson.loads((shop.root / STATE / POINTER_NAME).read_bytes())
    _fifo_in_place_of(shop.root / STATE / pointer["stateFile"])
    text = _finishes(lambda: refused("knowledge.get", {"projectId": PROJECT_ID, "itemId": shop.item_id}))
    assert "cannot be read" in text


def test_a_fifo_at_the_index_pointer_falls_back_to_the_substring_search(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    index_pointer = shop.root / STATE / INDEX_POINTER_NAME
    index_pointer.touch()
    _fifo_in_place_of(index_pointer)
    result = _finishes(lambda: call("knowledge.search", {"projectId": PROJECT_ID, "query": "locks"}))
    assert not result["isError"], result
    assert result["structuredContent"]["results"]


def test_a_negative_migration_count_in_the_pointer_is_damage_not_an_answer_that_breaks_its_schema(
        tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    path = shop.root / STATE / POINTER_NAME
    path.write_bytes(orjson.dumps({**orjson.loads(path.read_bytes()), "migrationCount": -1}))
    assert "pointer is damaged" in refused("knowledge.status", {"projectId": PROJECT_ID})


def test_a_relation_to_a_retired_item_is_withheld_with_its_note(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    writer = MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z")
    writer.item("operations.legacy-deploy", "The old deploy script.")
    writer.op(op="addRelation", sourceItemId=shop.item_id, relationType="refines",
              targetItemId="operations.legacy-deploy", note="see operations.legacy-deploy's secret handling")
    writer.write("legacy")
    apply_migrations(shop.root)
    related = call("knowledge.get", {"projectId": PROJECT_ID, "itemId": shop.item_id})["structuredContent"]
    assert [r["targetItemId"] for r in related["relations"]] == ["operations.legacy-deploy"]  # visible: shown
    retire = MigrationWriter(shop.root, created_at="2026-09-03T00:00:00Z")
    retire.op(op="deprecateItem", itemId="operations.legacy-deploy", reason="gone")
    retire.write("retire")
    apply_migrations(shop.root)
    item = call("knowledge.get", {"projectId": PROJECT_ID, "itemId": shop.item_id})["structuredContent"]
    assert item["relations"] == []
    assert "legacy-deploy" not in orjson.dumps(item).decode()


@pytest.mark.parametrize("levels", [1_000, 50_000])
def test_a_migration_nested_past_the_bound_is_refused_naming_it_not_a_crash(tmp_path: Path, levels: int) -> None:
    """50,000 levels killed `migrate apply` with SIGSEGV inside libyaml; 1,000 raised RecursionError."""
    shop = new_shop(tmp_path / "shop")
    path = shop.root / ".theurian/migrations/01K9Z000000000000000000000-deep.yaml"
    path.write_text("description: " + "[" * levels + "]" * levels + "\n", encoding="utf-8")
    with pytest.raises(MigrationInvalidError, match="nested deeper than 64 levels"):
        apply_migrations(shop.root)


def test_a_fifo_migration_or_body_is_refused_never_waited_on(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    fifo = shop.root / ".theurian/migrations/01K9Z000000000000000000000-fifo.yaml"
    os.mkfifo(fifo)
    with pytest.raises(MigrationInvalidError, match="the file is not a regular file"):
        _finishes(lambda: apply_migrations(shop.root))
    fifo.unlink()
    writer = MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z")
    writer.item("operations.piped", "a body")
    writer.write("piped")
    [body] = (shop.root / ".theurian/knowledge").glob("operations.piped-*.md")
    _fifo_in_place_of(body)
    with pytest.raises(MigrationInvalidError, match="is not a regular file"):
        _finishes(lambda: apply_migrations(shop.root))


def test_a_body_past_the_bound_is_refused_as_too_large_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, the whole file was read and then reported as a hash mismatch (the bound is shrunk here)."""
    shop = new_shop(tmp_path / "shop")
    writer = MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z")
    writer.item("operations.big", "x" * 200)
    writer.write("big")
    monkeypatch.setattr(migrations, "MAX_BODY_BYTES", 199)
    with pytest.raises(MigrationInvalidError, match="is larger than 199 bytes"):
        apply_migrations(shop.root)
    monkeypatch.setattr(migrations, "MAX_BODY_BYTES", 200)
    apply_migrations(shop.root)


def test_a_proposal_whose_evidence_is_a_link_out_is_damaged_and_the_others_still_list(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    healthy = drafted("knowledge.generateMigrationDraft", {
        "projectId": PROJECT_ID, "author": "agent-7", "description": "a healthy proposal",
        "operations": [{"op": "changeOwner", "itemId": shop.item_id, "owner": "orders-team"}]})
    broken = shop.root / ".theurian/proposals/01K1D000000000000000000000"
    broken.mkdir()
    (broken / "evidence.json").symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / "elsewhere.json").write_text("{}", encoding="utf-8")
    assert [(s.proposal_id, s.status) for s in list_proposals(shop.root)] == [
        (broken.name, DAMAGED), (healthy["proposalId"], PENDING)]
    reject_proposal(shop.root, broken.name)
    assert not broken.exists() and (tmp_path / "elsewhere.json").exists()


@pytest.mark.parametrize("anchor", ["abc", 5, None, {"provider": "github", "sourceUri": "https://github.com/a/b",
                                                     "lineStart": 10**23}])
def test_a_malformed_evidence_anchor_is_a_refusal_naming_the_operation_not_an_internal_fault(
        tmp_path: Path, anchor: Any) -> None:
    shop = new_shop(tmp_path / "shop")
    text = refused("knowledge.generateMigrationDraft", {
        "projectId": PROJECT_ID, "author": "agent-7", "description": "evidence",
        "operations": [{"op": "addEvidence", "itemId": shop.item_id, "anchor": anchor, "description": "d",
                        "confidence": 0.5}]})
    assert "operation 0" in text and "daemon failed" not in text


def test_a_state_another_process_holds_locked_is_busy_not_damaged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cure given was to delete the state: for a lock that a retry outlasts, that destroys a healthy one."""
    shop = new_shop(tmp_path / "shop")
    pointer = orjson.loads((shop.root / STATE / POINTER_NAME).read_bytes())
    monkeypatch.setattr(state, "READ_BUSY_SECONDS", 0.05)
    holder = sqlite3.connect(shop.root / STATE / pointer["stateFile"], isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        text = refused("knowledge.status", {"projectId": PROJECT_ID})
    finally:
        holder.close()
    assert text == "the knowledge state is locked by another process (nothing is wrong with it); try again in a moment"
    assert not call("knowledge.status", {"projectId": PROJECT_ID})["isError"]  # released: answered


def test_migrate_apply_over_a_locked_state_stops_and_never_rebuilds_over_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read as damage, the locked state was rebuilt (and deleted), and the applied history the checksum check reads
    was skipped."""
    shop = new_shop(tmp_path / "shop")
    pointer_before = (shop.root / STATE / POINTER_NAME).read_bytes()
    state_file = shop.root / STATE / orjson.loads(pointer_before)["stateFile"]
    MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z").op(
        op="changeOwner", itemId=shop.item_id, owner="orders-team").write("pending")
    monkeypatch.setattr(state, "READ_BUSY_SECONDS", 0.05)
    holder = sqlite3.connect(state_file, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StateBusyError):
            migration_status(shop.root)
        with pytest.raises(StateBusyError):
            apply_migrations(shop.root)
    finally:
        holder.close()
    assert state_file.is_file() and (shop.root / STATE / POINTER_NAME).read_bytes() == pointer_before
    assert apply_migrations(shop.root).applied_now  # released: the pending migration applies


def test_a_state_pointer_is_read_to_its_bound_and_refused_one_byte_past_it(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    path = shop.root / STATE / POINTER_NAME
    document = path.read_bytes().rstrip()
    path.write_bytes(document + b" " * (MAX_POINTER_BYTES - len(document)))  # JSON with trailing whitespace
    assert not call("knowledge.status", {"projectId": PROJECT_ID})["isError"]
    path.write_bytes(document + b" " * (MAX_POINTER_BYTES + 1 - len(document)))
    assert "pointer is damaged" in refused("knowledge.status", {"projectId": PROJECT_ID})


def test_a_migration_is_read_to_its_bound_and_refused_one_byte_past_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shrunk here, so the test need not write 64 MiB; read where the file is read, at the call."""
    shop = new_shop(tmp_path / "shop")
    [applied] = (shop.root / ".theurian/migrations").glob("*.yaml")
    size = applied.stat().st_size
    monkeypatch.setattr(migrations, "MAX_MIGRATION_BYTES", size - 1)
    with pytest.raises(MigrationInvalidError, match=f"larger than {size - 1} bytes"):
        apply_migrations(shop.root)
    monkeypatch.setattr(migrations, "MAX_MIGRATION_BYTES", size)
    apply_migrations(shop.root)


def test_a_proposal_trail_is_read_to_its_bound_and_damaged_one_byte_past_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shop = new_shop(tmp_path / "shop")
    drafted("knowledge.generateMigrationDraft", {
        "projectId": PROJECT_ID, "author": "agent-7", "description": "a proposal",
        "operations": [{"op": "changeOwner", "itemId": shop.item_id, "owner": "orders-team"}]})
    [trail] = (shop.root / ".theurian/proposals").glob("*/evidence.json")
    size = trail.stat().st_size
    monkeypatch.setattr(proposal_lifecycle, "MAX_TRAIL_BYTES", size - 1)
    assert [s.status for s in list_proposals(shop.root)] == [DAMAGED]
    monkeypatch.setattr(proposal_lifecycle, "MAX_TRAIL_BYTES", size)
    assert [s.status for s in list_proposals(shop.root)] == [PENDING]


@pytest.mark.parametrize(("name", "shown"), [
    ("x" * MAX_SHOWN_CHARS, repr("x" * MAX_SHOWN_CHARS)),
    ("x" * (MAX_SHOWN_CHARS + 1), f"a value of {MAX_SHOWN_CHARS + 1} characters"),
    ("a\u202e\n.yaml", "'a\\u202e\\n.yaml'"),
])
def test_a_trail_naming_no_migration_file_quotes_the_name_whole_or_by_its_length_never_cut(
        tmp_path: Path, name: str, shown: str) -> None:
    """The name was quoted as `repr(name[:80])`: a cut name that read as the whole one."""
    shop = new_shop(tmp_path / "shop")
    payload = drafted("knowledge.generateMigrationDraft", {
        "projectId": PROJECT_ID, "author": "agent-7", "description": "a proposal",
        "operations": [{"op": "changeOwner", "itemId": shop.item_id, "owner": "orders-team"}]})
    [trail] = (shop.root / ".theurian/proposals").glob("*/evidence.json")
    trail.write_bytes(orjson.dumps({**orjson.loads(trail.read_bytes()), "migrationFile": name}))
    with pytest.raises(ProposalError) as refused:
        accept_proposal(shop.root, payload["proposalId"])
    assert str(refused.value) == (
        f"proposal {payload['proposalId']}'s evidence.json names {shown}, which is not a migration file name "
        "(<ULID>-<slug>.yaml); nothing was moved. Reject it and draft again.")
