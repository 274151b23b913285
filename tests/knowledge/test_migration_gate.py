"""The control-character rule every migration meets, drafted by a write tool or written by hand: no C0 or C1
control in any field but tab, line feed and carriage return in free text (`description`, `note`, `reason`) and
bodies — tested at each edge of each range."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge.apply import apply_migrations
from knowledge.errors import MigrationInvalidError
from knowledge.migration_gate import control_character
from knowledge.rehearsal import rehearse
from tests.knowledge.authoring import MigrationWriter
from tests.knowledge.proposal_support import PROJECT_ID, drafted, new_shop, proposals, refused


@pytest.mark.parametrize(("character", "refused_as"), [
    ("\x00", "U+0000"), ("\x1f", "U+001F"), ("\x7f", "U+007F"), ("\x80", "U+0080"), ("\x9f", "U+009F"),
    ("\t", "U+0009"), ("\n", "U+000A"), ("\r", "U+000D"), ("\x0b", "U+000B"),
    (" ", None), ("~", None), ("\xa0", None), ("é", None),
])
def test_a_one_line_field_refuses_exactly_the_c0_and_c1_controls(character: str, refused_as: str | None) -> None:
    assert control_character(f"a{character}b", multiline=False) == refused_as


@pytest.mark.parametrize(("character", "refused_as"), [
    ("\t", None), ("\n", None), ("\r", None),
    ("\x00", "U+0000"), ("\x08", "U+0008"), ("\x0b", "U+000B"), ("\x0c", "U+000C"), ("\x0e", "U+000E"),
    ("\x1f", "U+001F"), ("\x7f", "U+007F"), ("\x9f", "U+009F"), (" ", None), ("\xa0", None),
])
def test_free_text_and_bodies_admit_tab_and_line_breaks_and_no_other_control(
        character: str, refused_as: str | None) -> None:
    assert control_character(f"a{character}b", multiline=True) == refused_as


@pytest.mark.parametrize(("field", "value"), [("author", "a\x00b"), ("title", "Lock\x1forder"),
                                              ("description", "why\x7f")])
def test_knowledge_propose_change_refuses_a_control_character_naming_field_and_code_point(
        tmp_path: Path, field: str, value: str) -> None:
    shop = new_shop(tmp_path / "shop")
    arguments = {"projectId": PROJECT_ID, "itemId": shop.item_id, "expectedRevision": shop.revision_id,
                 "body": "Locks after reads.", "author": "agent-7", field: value}
    text = refused("knowledge.proposeChange", arguments)
    code_point = f"U+{ord(next(c for c in value if not c.isprintable())):04X}"
    assert f"`{field}` holds the control character {code_point}" in text and value not in text
    assert text.startswith("the draft was refused before anything was written") and proposals(shop.root) == []


def test_knowledge_propose_change_drafts_a_description_and_body_holding_tabs_and_line_breaks(
        tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    drafted("knowledge.proposeChange", {"projectId": PROJECT_ID, "itemId": shop.item_id,
                                        "expectedRevision": shop.revision_id, "body": "Locks\tafter\r\nreads.\n",
                                        "author": "agent-7", "description": "why:\n\tbecause"})
    assert len(proposals(shop.root)) == 1


def test_a_migration_draft_refuses_a_c1_control_in_an_owner(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    text = refused("knowledge.generateMigrationDraft", {
        "projectId": PROJECT_ID, "author": "agent-7", "description": "new owner",
        "operations": [{"op": "changeOwner", "itemId": shop.item_id, "owner": "team\x85a"}]})
    assert "operation 0: `owner` holds the control character U+0085" in text and proposals(shop.root) == []


def test_migrate_validate_and_apply_refuse_a_hand_written_migration_with_a_nul_in_a_title(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    before = (shop.root / ".theurian/state/knowledge-active.json").read_bytes()
    writer = MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z")
    writer.item("operations.nul", "fine", title="a\x00b")
    path = writer.write("nul")
    for check in (rehearse, apply_migrations):
        with pytest.raises(MigrationInvalidError) as refusal:
            check(shop.root)
        assert refusal.value.message == (
            f"migration {path.name} is invalid at operation 1: `title` holds the control character U+0000, which "
            "no title may hold; remove it; nothing was changed")
    assert (shop.root / ".theurian/state/knowledge-active.json").read_bytes() == before


def test_migrate_apply_refuses_a_body_holding_an_escape_character(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    writer = MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z")
    writer.item("operations.escape", "red \x1b[31m text\n")
    writer.write("escape")
    with pytest.raises(MigrationInvalidError) as refusal:
        apply_migrations(shop.root)
    assert "holds the control character U+001B, which no body may hold" in refusal.value.message
