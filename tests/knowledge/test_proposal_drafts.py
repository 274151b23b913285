"""knowledge.proposeChange and knowledge.generateMigrationDraft behind the real dispatcher, and what a person then
does with the proposal in-process: accept it, apply it, read the result back."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from knowledge import proposal_lifecycle
from knowledge.apply import apply_migrations
from knowledge.errors import FolderRedirectedError, ProposalError
from knowledge.proposal_lifecycle import ACCEPTED, PENDING, accept_proposal, list_proposals, reject_proposal
from knowledge.proposals import V1_DRAFT_KINDS
from knowledge.reading import get_item
from tests.knowledge.authoring import MigrationWriter
from tests.knowledge.proposal_support import (
    PROJECT_ID,
    call,
    candidate_arguments,
    drafted,
    new_shop,
    proposals,
    refused,
)
from theurian.errors import AlreadyInPlaceError
from theurian.folder_lock import folder_held
from theurian.project import Project

CHANGE = "knowledge.proposeChange"
CANDIDATE = "review.generateKnowledgeCandidate"
DRAFT = "knowledge.generateMigrationDraft"
FOUR_OTHERS = ("createItem", "upsertRevision", "changeSensitivity", "restoreItem")


def change_arguments(item_id: str, expected: str | None, **overrides: Any) -> dict[str, Any]:
    return {"projectId": PROJECT_ID, "itemId": item_id, "expectedRevision": expected,
            "body": "Locks are taken after every read they depend on.\n", "author": "agent-7"} | overrides


def test_a_change_drafts_a_proposal_that_accepts_and_applies_into_the_new_revision(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    payload = drafted(CHANGE, change_arguments(shop.item_id, shop.revision_id, title="Lock order, revised"))
    assert payload["expectedRevision"] == shop.revision_id
    assert [s.status for s in list_proposals(shop.root)] == [PENDING]
    accept_proposal(shop.root, payload["proposalId"])
    assert (shop.root / payload["bodyDestination"]).is_file()
    assert [s.status for s in list_proposals(shop.root)] == [ACCEPTED]
    apply_migrations(shop.root)
    item = get_item(Project(PROJECT_ID, shop.root), "internal", shop.item_id, shop.item_id)
    assert (item["revisionId"], item["title"]) == (payload["revisionId"], "Lock order, revised")
    assert item["body"] == change_arguments(shop.item_id, None)["body"]
    assert item["trustLevel"] == "reviewed"  # every property but title and body is the current revision's


def test_a_second_accept_exits_as_already_in_place_naming_the_migration(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    payload = drafted(CHANGE, change_arguments(shop.item_id, shop.revision_id))
    accept_proposal(shop.root, payload["proposalId"])
    with pytest.raises(AlreadyInPlaceError) as raised:
        accept_proposal(shop.root, payload["proposalId"])
    assert raised.value.exit_code == 4 and payload["migrationFile"] in raised.value.message


def test_an_expected_revision_that_is_not_current_is_a_revision_conflict_with_details(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    for expected in ("01K30000000000000000000999", None):
        text = refused(CHANGE, change_arguments(shop.item_id, expected))
        error = json.loads(text)["error"]
        assert error["code"] == "REVISION_CONFLICT"
        assert error["details"] == {"itemId": shop.item_id, "expected": expected, "actual": shop.revision_id}
    assert proposals(shop.root) == []


def test_a_change_to_an_absent_or_withheld_item_gets_one_answer(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    writer = MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z")
    secret = writer.item("security.keys", "Rotate keys.", sensitivity="restricted", kind="security")
    writer.write("keys")
    apply_migrations(shop.root)
    withheld = refused(CHANGE, change_arguments("security.keys", secret))
    absent = refused(CHANGE, change_arguments("security.nothing", secret))
    assert withheld.replace("security.keys", "X") == absent.replace("security.nothing", "X")
    assert proposals(shop.root) == []


def _accept_stopped_at_link(monkeypatch: pytest.MonkeyPatch, shop_root: Path, proposal_id: str, stop_at: int) -> None:
    """Accept, with the `stop_at`-th link raising KeyboardInterrupt as a Ctrl-C (or a full disk) would there."""
    real_link = proposal_lifecycle.link_new
    made: list[Path] = []

    def link(source: Path, destination: Path) -> None:
        if len(made) == stop_at:
            raise KeyboardInterrupt
        real_link(source, destination)
        made.append(destination)

    monkeypatch.setattr(proposal_lifecycle, "link_new", link)
    with pytest.raises(KeyboardInterrupt):
        accept_proposal(shop_root, proposal_id)
    monkeypatch.setattr(proposal_lifecycle, "link_new", real_link)


def test_an_accept_stopped_after_the_body_and_before_the_migration_is_pending_and_accepting_again_finishes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shop = new_shop(tmp_path / "shop")
    payload = drafted(CHANGE, change_arguments(shop.item_id, shop.revision_id, title="Lock order, revised"))
    _accept_stopped_at_link(monkeypatch, shop.root, payload["proposalId"], stop_at=1)
    assert (shop.root / payload["bodyDestination"]).is_file()  # the body was linked in, the migration was not
    assert [s.status for s in list_proposals(shop.root)] == [PENDING]
    accepted = accept_proposal(shop.root, payload["proposalId"])
    assert accepted.bodies == (payload["bodyDestination"],)
    assert [s.status for s in list_proposals(shop.root)] == [ACCEPTED]
    apply_migrations(shop.root)
    item = get_item(Project(PROJECT_ID, shop.root), "internal", shop.item_id, shop.item_id)
    assert (item["revisionId"], item["title"]) == (payload["revisionId"], "Lock order, revised")


def test_rejecting_an_accept_stopped_before_the_migration_takes_its_body_back_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shop = new_shop(tmp_path / "shop")
    payload = drafted(CHANGE, change_arguments(shop.item_id, shop.revision_id))
    _accept_stopped_at_link(monkeypatch, shop.root, payload["proposalId"], stop_at=1)
    before = sorted((shop.root / ".theurian/knowledge").rglob("*"))
    reject_proposal(shop.root, payload["proposalId"])
    assert proposals(shop.root) == []
    after = sorted((shop.root / ".theurian/knowledge").rglob("*"))
    assert [path for path in before if path not in after] == [shop.root / payload["bodyDestination"]]


def test_a_body_someone_else_put_at_the_destination_is_never_replaced_nor_removed(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    payload = drafted(CHANGE, change_arguments(shop.item_id, shop.revision_id))
    theirs = shop.root / payload["bodyDestination"]
    theirs.parent.mkdir(parents=True, exist_ok=True)
    theirs.write_text("someone else's body\n", encoding="utf-8")
    with pytest.raises(ProposalError, match="already exists and is never replaced; nothing was moved"):
        accept_proposal(shop.root, payload["proposalId"])
    reject_proposal(shop.root, payload["proposalId"])
    assert theirs.read_text(encoding="utf-8") == "someone else's body\n"


@pytest.mark.parametrize("stop_at", ["migration", "body"])
def test_an_accept_stopped_after_the_migration_landed_has_accepted_and_accepting_again_tidies(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop_at: str) -> None:
    """Stopped while the proposal's own names are removed — before the migration's, or between it and the
    body's: the proposal is accepted, a reject is refused, and accepting again removes what is left, exit 4."""
    shop = new_shop(tmp_path / "shop")
    payload = drafted(CHANGE, change_arguments(shop.item_id, shop.revision_id))
    folder = shop.root / payload["proposalDirectory"]
    real_unlink = Path.unlink

    def unlink(path: Path, missing_ok: bool = False) -> None:
        stopping = path.name == payload["migrationFile"] if stop_at == "migration" else path.suffix == ".md"
        if stopping and folder in path.parents:
            raise KeyboardInterrupt
        real_unlink(path, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    with pytest.raises(KeyboardInterrupt):
        accept_proposal(shop.root, payload["proposalId"])
    monkeypatch.setattr(Path, "unlink", real_unlink)
    assert [s.status for s in list_proposals(shop.root)] == [ACCEPTED]
    with pytest.raises(ProposalError, match="was already accepted"):
        reject_proposal(shop.root, payload["proposalId"])
    with pytest.raises(AlreadyInPlaceError):
        accept_proposal(shop.root, payload["proposalId"])
    assert sorted(p.name for p in folder.rglob("*") if p.is_file()) == ["evidence.json"]
    assert (shop.root / payload["bodyDestination"]).is_file()
    apply_migrations(shop.root)


def test_an_accept_holds_the_proposals_folder_while_it_links_so_a_reject_cannot_interleave(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unserialised, a reject that had seen "pending" removed the body the landing migration needed; a reject
    after the accept refuses the accepted proposal."""
    shop = new_shop(tmp_path / "shop")
    payload = drafted(CHANGE, change_arguments(shop.item_id, shop.revision_id))
    real_link = proposal_lifecycle.link_new
    probes: list[str] = []

    def link_then_probe(source: Path, destination: Path) -> None:
        real_link(source, destination)
        try:
            with folder_held(shop.root / ".theurian/proposals", wait=False):
                probes.append("free")
        except BlockingIOError:
            probes.append("held")

    monkeypatch.setattr(proposal_lifecycle, "link_new", link_then_probe)
    accept_proposal(shop.root, payload["proposalId"])
    monkeypatch.undo()
    assert probes == ["held", "held"]  # the body's link and the migration's
    with pytest.raises(ProposalError, match="already accepted"):
        reject_proposal(shop.root, payload["proposalId"])
    assert (shop.root / payload["bodyDestination"]).is_file()
    apply_migrations(shop.root)


def test_accept_refuses_a_migration_apply_would_refuse_once_it_landed_and_moves_nothing(tmp_path: Path) -> None:
    """Two candidates for one new item: each drafts (neither exists yet), the first is accepted, and the second,
    landed, would stop every later `migrate apply` on "already exists"."""
    shop = new_shop(tmp_path / "shop")
    first = drafted(CANDIDATE, candidate_arguments(shop))
    second = drafted(CANDIDATE, candidate_arguments(shop))
    accept_proposal(shop.root, first["proposalId"])
    with pytest.raises(ProposalError, match=r"`theurian migrate apply` would refuse .* already exists"):
        accept_proposal(shop.root, second["proposalId"])
    assert [s.status for s in list_proposals(shop.root)] == [ACCEPTED, PENDING]
    assert not (shop.root / second["bodyDestination"]).exists()
    apply_migrations(shop.root)  # the project's migrations still apply


def test_a_rejected_proposal_is_removed(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    payload = drafted(CHANGE, change_arguments(shop.item_id, shop.revision_id))
    reject_proposal(shop.root, payload["proposalId"])
    assert proposals(shop.root) == []


ADMITTED: dict[str, dict[str, Any]] = {
    "deprecateItem": {"itemId": "architecture.lock-order", "reason": "superseded by the runbook"},
    "addRelation": {"sourceItemId": "architecture.lock-order", "relationType": "refines",
                    "targetItemId": "architecture.lock-order"},
    "removeRelation": {"sourceItemId": "a.b", "relationType": "refines", "targetItemId": "c.d"},
    "addAlias": {"alias": "lock-order", "itemId": "architecture.lock-order"},
    "removeAlias": {"alias": "lock-order"},
    "changeOwner": {"itemId": "architecture.lock-order", "owner": "orders-team"},
    "registerSpecification": {"specId": "spec.locks", "itemId": "architecture.lock-order",
                              "sourceUri": "git://orders/specs/locks.md", "format": "markdown"},
    "supersedeSpecification": {"specId": "spec.locks", "supersededBy": "spec.locks-v2"},
    "addEvidence": {"itemId": "architecture.lock-order", "description": "the thread",
                    "anchor": {"provider": "github", "sourceUri": "https://github.com/a/b/pull/1"},
                    "confidence": 0.8},
    "removeEvidence": {"itemId": "architecture.lock-order", "sourceUri": "https://github.com/a/b/pull/1"},
}


def test_the_admitted_set_is_exactly_the_ten_v1_kinds() -> None:
    assert set(V1_DRAFT_KINDS) == set(ADMITTED) and len(V1_DRAFT_KINDS) == 10
    assert not set(FOUR_OTHERS) & set(V1_DRAFT_KINDS)


@pytest.mark.parametrize("kind", sorted(ADMITTED))
def test_each_admitted_kind_drafts_a_schema_valid_migration(tmp_path: Path, kind: str) -> None:
    shop = new_shop(tmp_path / "shop")
    payload = drafted(DRAFT, {"projectId": PROJECT_ID, "author": "agent-7", "description": f"a {kind}",
                              "operations": [{"op": kind, **ADMITTED[kind]}]})
    assert payload["revisionId"] is None and payload["bodyFile"] is None and payload["contentFile"] is None
    document = yaml.safe_load((shop.root / payload["proposalDirectory"] / payload["migrationFile"]).read_text())
    assert document["operations"] == [{"op": kind, **ADMITTED[kind]}]


@pytest.mark.parametrize("kind", FOUR_OTHERS)
def test_each_of_the_other_four_kinds_is_refused_naming_the_admitted_set(tmp_path: Path, kind: str) -> None:
    shop = new_shop(tmp_path / "shop")
    text = refused(DRAFT, {"projectId": PROJECT_ID, "author": "a", "description": "d",
                           "operations": [ADMITTED["addAlias"] | {"op": "addAlias"}, {"op": kind, "itemId": "x"}]})
    assert ", ".join(V1_DRAFT_KINDS) in text and f"`operations[1].op` is '{kind}'" in text
    assert proposals(shop.root) == []


def test_a_draft_that_fails_the_migration_schema_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    text = refused(DRAFT, {"projectId": PROJECT_ID, "author": "a", "description": "d",
                           "operations": [{"op": "addEvidence", "itemId": "x", "description": "d",
                                           "anchor": {"provider": "github", "sourceUri": "u"}, "confidence": 7}]})
    assert "invalid at operation 0" in text and "confidence" in text
    assert proposals(shop.root) == []


def test_concurrent_drafts_never_collide(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    barrier = threading.Barrier(8)
    results: list[dict[str, Any]] = []

    def draft(n: int) -> None:
        barrier.wait()
        arguments = {"projectId": PROJECT_ID, "author": "a", "description": "same description every time",
                     "operations": [{"op": "addAlias", "alias": f"alias-{n}", "itemId": shop.item_id}]}
        results.append(call(DRAFT, arguments))
        results.append(call(CHANGE, change_arguments(shop.item_id, shop.revision_id, body=f"body {n}\n")))

    workers = [threading.Thread(target=draft, args=(n,)) for n in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    payloads = [r["structuredContent"] for r in results if not r["isError"]]
    assert len(payloads) == 16
    for key in ("proposalId", "migrationId", "migrationFile"):
        assert len({p[key] for p in payloads}) == 16, key
    assert len({p["revisionId"] for p in payloads if p["revisionId"]}) == 8
    assert len(proposals(shop.root)) == 16
    bodies = {(shop.root / p["bodyFile"]).read_text() for p in payloads if p["bodyFile"]}
    assert bodies == {f"body {n}\n" for n in range(8)}


@pytest.mark.parametrize("folder", ["migrations", "knowledge"])
def test_accept_refuses_a_redirected_migrations_or_knowledge_folder_and_moves_nothing(tmp_path: Path,
                                                                                     folder: str) -> None:
    shop = new_shop(tmp_path / "shop")
    payload = drafted(CHANGE, change_arguments(shop.item_id, shop.revision_id))
    real = shop.root / ".theurian" / folder
    real.rename(shop.root / ".theurian" / f"real-{folder}")
    real.symlink_to(f"real-{folder}")
    with pytest.raises(FolderRedirectedError, match=rf"^PATH_ESCAPE_REFUSAL: \.theurian/{folder} does not resolve"):
        accept_proposal(shop.root, payload["proposalId"])
    assert [s.status for s in list_proposals(shop.root)] == [PENDING]


def test_a_file_at_the_proposals_folders_name_is_a_refusal_naming_the_cure_not_an_internal_fault(
        tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    (shop.root / ".theurian/proposals").write_text("not a folder", encoding="utf-8")
    text = refused(CHANGE, change_arguments(shop.item_id, shop.revision_id))
    assert text == (".theurian/proposals is not a folder (something else sits at its name), so nothing was read or "
                    "written there. Cure: move it aside; Theurian creates .theurian/proposals as a folder when it "
                    "first needs it.")
    assert (shop.root / ".theurian/proposals").read_text(encoding="utf-8") == "not a folder"


def test_a_theurian_folder_linked_within_the_project_is_named_as_the_link_to_replace(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    (shop.root / ".theurian").rename(shop.root / "elsewhere")
    (shop.root / ".theurian").symlink_to("elsewhere", target_is_directory=True)
    text = refused(CHANGE, change_arguments(shop.item_id, shop.revision_id))
    assert ("PATH_ESCAPE_REFUSAL: .theurian does not resolve to its own place in the project (a symlink redirects "
            "it), so nothing was read or written through it. Cure: replace .theurian with a plain folder") in text
    assert not (shop.root / "elsewhere/proposals").exists()
