"""knowledge.generateMigrationDraft refuses operations that conflict among themselves (visible in the operations
alone), and drafts every sequence `migrate apply` would replay; each refused pair is one apply refuses too."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from knowledge.apply import apply_migrations
from knowledge.errors import MigrationInvalidError
from knowledge.proposal_lifecycle import accept_proposal
from tests.knowledge.authoring import MigrationWriter, copy_sample
from tests.knowledge.proposal_support import PROJECT_ID, drafted, new_shop, proposals, refused

DRAFT = "knowledge.generateMigrationDraft"
ALIAS_A = {"op": "addAlias", "alias": "dup", "itemId": "x.a"}
ALIAS_B = {"op": "addAlias", "alias": "dup", "itemId": "x.b"}
UNALIAS = {"op": "removeAlias", "alias": "dup"}
RELATE = {"op": "addRelation", "sourceItemId": "x.a", "relationType": "refines", "targetItemId": "x.b"}
UNRELATE = {**RELATE, "op": "removeRelation"}
SPEC_A = {"op": "registerSpecification", "specId": "s1", "itemId": "x.a", "sourceUri": "git://s/1.md",
          "format": "markdown"}
SPEC_B = {**SPEC_A, "itemId": "x.b"}
EVIDENCE = {"op": "addEvidence", "itemId": "x.a", "description": "the thread", "confidence": 0.8,
            "anchor": {"provider": "github", "sourceUri": "https://github.com/a/b/pull/1"}}
UNEVIDENCE = {"op": "removeEvidence", "itemId": "x.a", "sourceUri": "https://github.com/a/b/pull/1"}

# (operations, the operation refused, the earlier one it conflicts with)
CONFLICTING = {
    "an alias added twice": ([ALIAS_A, ALIAS_B], 1, 0),
    "an alias removed twice": ([ALIAS_A, UNALIAS, UNALIAS], 2, 1),
    "a relation added twice": ([RELATE, {**RELATE, "note": "again"}], 1, 0),
    "a relation removed twice": ([RELATE, UNRELATE, UNRELATE], 2, 1),
    "a specification registered twice": ([SPEC_A, SPEC_B], 1, 0),
    "evidence added twice": ([EVIDENCE, {**EVIDENCE, "description": "again"}], 1, 0),
    "evidence removed twice": ([EVIDENCE, UNEVIDENCE, UNEVIDENCE], 2, 1),
}
# Replayed by `migrate apply` (a later deprecation, owner or supersession of one thing wins), so drafted.
REPLAYABLE = {
    "an alias added, removed and added again": [ALIAS_A, UNALIAS, ALIAS_B],
    "a relation added, removed and added again": [RELATE, UNRELATE, RELATE],
    "evidence added, removed and added again": [EVIDENCE, UNEVIDENCE, EVIDENCE],
    "one source's evidence on two items": [EVIDENCE, {**EVIDENCE, "itemId": "x.b"}],
    "an item deprecated twice": [{"op": "deprecateItem", "itemId": "x.a"}, {"op": "deprecateItem", "itemId": "x.a",
                                                                            "reason": "retired"}],
    "an owner changed twice": [{"op": "changeOwner", "itemId": "x.a", "owner": "o1"},
                               {"op": "changeOwner", "itemId": "x.a", "owner": "o2"}],
    "a specification superseded twice": [SPEC_A, {**SPEC_A, "specId": "s2"},
                                         {"op": "supersedeSpecification", "specId": "s1", "supersededBy": "s2"},
                                         {"op": "supersedeSpecification", "specId": "s1", "supersededBy": "s2"}],
}


def _draft(operations: list[dict[str, Any]]) -> dict[str, Any]:
    # Each operation its own objects, as a call decoded from JSON has them (a shared one is written as a YAML
    # anchor, which a migration refuses).
    return {"projectId": PROJECT_ID, "author": "agent-7", "description": "d",
            "operations": [copy.deepcopy(op) for op in operations]}


def _applied_after_two_items(root: Path, operations: list[dict[str, Any]]) -> None:
    """`operations` replayed by `migrate apply` after a migration creating x.a and x.b (operations 0 to 3)."""
    writer = MigrationWriter(root, created_at="2026-09-01T00:00:00Z")
    writer.item("x.a", "A.")
    writer.item("x.b", "B.")
    for operation in [copy.deepcopy(op) for op in operations]:
        writer.op(**operation)
    writer.write("ops")
    apply_migrations(root)


def test_two_operations_adding_one_alias_are_refused_at_draft_time_naming_both(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    text = refused(DRAFT, _draft([ALIAS_A, ALIAS_B]))
    assert text == (
        "the draft was refused before anything was written: operation 1 adds alias 'dup', which operation 0 "
        "already adds: the two can never both apply (the second would find it already there), so accepting the "
        "draft would be refused. Drop one of them."
    )
    assert proposals(shop.root) == []


@pytest.mark.parametrize(("operations", "refused_at", "earlier"), CONFLICTING.values(), ids=CONFLICTING)
def test_operations_that_conflict_among_themselves_are_refused_naming_both(
        tmp_path: Path, operations: list[dict[str, Any]], refused_at: int, earlier: int) -> None:
    shop = new_shop(tmp_path / "shop")
    text = refused(DRAFT, _draft(operations))
    assert f"operation {refused_at} " in text and f"which operation {earlier} already" in text
    assert proposals(shop.root) == []


@pytest.mark.parametrize(("operations", "refused_at", "earlier"), CONFLICTING.values(), ids=CONFLICTING)
def test_each_refused_conflict_is_one_migrate_apply_refuses_at_the_same_operation(
        tmp_path: Path, operations: list[dict[str, Any]], refused_at: int, earlier: int) -> None:
    with pytest.raises(MigrationInvalidError) as caught:
        _applied_after_two_items(copy_sample(tmp_path / "sample"), operations)
    assert caught.value.operation_index == 4 + refused_at


@pytest.mark.parametrize("operations", REPLAYABLE.values(), ids=REPLAYABLE)
def test_a_sequence_migrate_apply_replays_is_drafted(tmp_path: Path, operations: list[dict[str, Any]]) -> None:
    new_shop(tmp_path / "shop")
    assert drafted(DRAFT, _draft(operations))["proposalId"]
    _applied_after_two_items(copy_sample(tmp_path / "sample"), operations)


def test_the_draft_the_issue_reported_was_accepted_only_to_be_refused_and_now_is_refused_first(
        tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    item = {"itemId": shop.item_id}
    result = refused(DRAFT, _draft([{**ALIAS_A, **item}, {**ALIAS_A, **item}]))
    assert "can never both apply" in result
    assert proposals(shop.root) == []
    single = drafted(DRAFT, _draft([{**ALIAS_A, **item}]))
    accept_proposal(shop.root, single["proposalId"])  # one addAlias is accepted as before
