"""knowledge.drafts.propose_change on one ChangeRequest: what the request leaves unset is taken from the current
revision or named for the item, and the surface that drafted it is recorded."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from knowledge.apply import apply_migrations
from knowledge.drafts import ChangeRequest, ProposalRevisionConflictError, propose_change
from knowledge.proposal_lifecycle import accept_proposal
from knowledge.proposals import DraftFacade
from knowledge.reading import get_item
from knowledge.state_stamp import STORE_KIND
from tests.knowledge.proposal_support import PROJECT_ID, evidence_of, new_shop, proposals
from theurian import stamped_store
from theurian.project import resolve_project
from theurian.stamped_store import SETTLED_NS, VerifiedStores


def test_a_request_without_title_or_description_keeps_the_title_and_names_the_item_in_its_reason(
        tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    project = resolve_project(PROJECT_ID)
    request = ChangeRequest(item_id=shop.item_id, expected_revision=shop.revision_id, body="Reads first.\n",
                            author="agent-7", drafted_by="a test")
    payload = propose_change(project, "internal", DraftFacade(shop.root), request)
    evidence = evidence_of(shop.root, payload)
    assert evidence["draftedBy"] == "a test"
    assert evidence["reasoning"] == [f"A new revision of {shop.item_id}."]
    accept_proposal(shop.root, payload["proposalId"])
    apply_migrations(shop.root)
    item = get_item(project, "internal", shop.item_id, repr(shop.item_id))
    assert (item["revisionId"], item["title"]) == (payload["revisionId"], "Lock order")


def test_a_request_against_a_revision_that_is_not_current_drafts_nothing(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    request = ChangeRequest(item_id=shop.item_id, expected_revision=None, body="b\n", author="a", drafted_by="t")
    with pytest.raises(ProposalRevisionConflictError):
        propose_change(resolve_project(PROJECT_ID), "internal", DraftFacade(shop.root), request)
    assert proposals(shop.root) == []


def test_a_change_drafted_with_the_daemons_cache_leaves_the_state_verified_in_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shop = new_shop(tmp_path / "shop")
    # A state younger than SETTLED_NS is verified on every call; the clock says it has settled.
    later = time.time_ns() + SETTLED_NS
    monkeypatch.setattr(stamped_store.time, "time_ns", lambda: later)
    stores = VerifiedStores()
    request = ChangeRequest(item_id=shop.item_id, expected_revision=shop.revision_id, body="Reads first.\n",
                            author="agent-7", drafted_by="a test")
    assert len(stores.shelf(STORE_KIND)) == 0
    propose_change(resolve_project(PROJECT_ID), "internal", DraftFacade(shop.root), request, stores)
    # The next call through the same cache reads the state without digesting it again.
    assert len(stores.shelf(STORE_KIND)) == 1
