"""review.generateKnowledgeCandidate from a recurring concern, behind the real dispatcher: exactly one source, the
gate met by one member thread (its fix commit verified against that thread's file), every member in evidence.json
with its signals, and the refusals when no member can meet it."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import yaml

import schemas
from knowledge.candidate import (
    MAX_SOURCE_ANCHORS,
    ONE_SOURCE_REFUSAL,
    THREAD_PAIR_REFUSAL,
    CandidateRequest,
    generate_candidate,
)
from knowledge.proposals import DraftFacade
from projection.errors import CONCERN_NOT_AVAILABLE_REFUSAL
from projection.review_store import open_store
from projection.review_threads import StoredThread, load_thread
from tests.knowledge.proposal_support import (
    PROJECT_ID,
    REPOSITORY,
    THREAD_KEY,
    THREAD_PATH,
    Shop,
    candidate_arguments,
    drafted,
    evidence_of,
    merged_pull,
    new_shop,
    proposals,
    refused,
)
from tests.projection.review_records import thread
from theurian.project import Project

TOOL = "review.generateKnowledgeCandidate"
# The lock-order concern of fixtures/concerns, left on four pull requests; the first is on the fix commit's file.
BODIES = (
    "transfer takes the account lock and then the ledger lock, refund takes them in the opposite order. Two "
    "concurrent calls will deadlock.",
    "Drain locks q.mu then s.mu but Resize locks s.mu then q.mu: classic lock ordering deadlock under load.",
    "Acquire the two mutexes in a consistent order everywhere, otherwise these threads can deadlock waiting on each "
    "other.",
    "with_lock on the order and then the product, while restock locks product then order: that can deadlock.",
)


def _shop(root: Path, states: tuple[str, ...] = ("resolved", "open", "resolved", "outdated")) -> Shop:
    threads = [thread(REPOSITORY, 42 + index, f"PRRT_lock{index}", bodies=(body,), state=states[index],
                      path=THREAD_PATH if index == 0 else f"src/other{index}.py")
               for index, body in enumerate(BODIES)]
    return new_shop(root, threads=threads, pulls=[merged_pull(number=42 + index) for index in range(len(BODIES))])


def _concern(shop: Shop) -> str:
    rows = open_store(shop.root).cursor().execute("SELECT concern_id FROM s.concerns").fetchall()
    assert len(rows) == 1
    return str(rows[0][0])


def _arguments(shop: Shop, **overrides: Any) -> dict[str, Any]:
    arguments = candidate_arguments(shop, concernId=_concern(shop), **overrides)
    del arguments["repository"], arguments["recordKey"]
    return {key: value for key, value in arguments.items() if value is not None}


def test_a_concern_becomes_one_candidate_whose_evidence_lists_every_member_with_its_signals(tmp_path: Path) -> None:
    shop = _shop(tmp_path / "shop")
    payload = drafted(TOOL, _arguments(shop))
    trail = evidence_of(shop.root, payload)
    assert trail["concern"]["concernId"] == _concern(shop) and trail["concern"]["memberCount"] == 4
    members = trail["concern"]["members"]
    assert [m["thread"]["recordKey"] for m in members] == [f"PRRT_lock{index}" for index in range(4)]
    assert all(set(m["signals"]) == {"pullRequestMerged", "threadResolved", "notDismissedOrOutdated",
                                     "ciSuccessful", "hasEvidence"} for m in members)
    assert [m["signals"]["threadResolved"]["outcome"] for m in members] == ["met", "failed", "met", "failed"]
    assert trail["thread"]["recordKey"] == "PRRT_lock0" and trail["gate"]["fixCommitPresent"]["outcome"] == "met"
    folder = shop.root / payload["proposalDirectory"]
    _, upsert = yaml.safe_load((folder / payload["migrationFile"]).read_text(encoding="utf-8"))["operations"]
    anchors = upsert["metadata"]["sourceAnchors"]
    assert len(anchors) == 4 and anchors[0]["filePath"] == THREAD_PATH
    assert upsert["metadata"]["scopePaths"] == [THREAD_PATH]


def test_a_concern_past_the_anchor_bound_drafts_the_first_anchors_and_keeps_every_member_in_the_evidence(
        tmp_path: Path) -> None:
    """More member threads than a revision may name: the gate thread's anchor and the next ones up to
    MAX_SOURCE_ANCHORS, the migration schema's own bound, so the draft is valid; every member stays in
    evidence.json.

    The members are handed to `generate_candidate` as the values the store hands out (knowledge never opens the
    store): the shop's one stored thread, then copies of it, each on a pull request of its own (so a sourceUri of its
    own) whose record the store does not hold. Writing and building MAX_SOURCE_ANCHORS threads would take seconds."""
    schema = schemas.load("knowledge", "migration.schema.json")
    assert schema["$defs"]["revisionMetadata"]["properties"]["sourceAnchors"]["maxItems"] == MAX_SOURCE_ANCHORS
    shop = new_shop(tmp_path / "shop")
    gate = load_thread(shop.root, REPOSITORY, THREAD_KEY)
    members = [gate]
    for number in range(43, 43 + MAX_SOURCE_ANCHORS + 4):
        record = copy.deepcopy(gate.thread.record)
        record.update(recordKey=f"PRRT_many{number}", pullRequest=number, path=f"src/other{number}.py",
                      sourceUri=f"https://github.com/{REPOSITORY}/pull/{number}#discussion_r1")
        members.append(StoredThread(replace(gate.thread, record=record), None))
    arguments = candidate_arguments(shop)
    request = CandidateRequest(
        fix_commit=shop.fix_commit, item_id=arguments["itemId"], title=arguments["title"], body=arguments["body"],
        kind=arguments["kind"], category=arguments["category"], owner=arguments["owner"],
        author=arguments["author"], drafted_by=TOOL, concern_id="concern-" + "a" * 24)
    payload = generate_candidate(Project(PROJECT_ID, shop.root), "internal", DraftFacade(shop.root), request,
                                 members)
    migration = yaml.safe_load((shop.root / payload["proposalDirectory"] / payload["migrationFile"]).read_text(
        encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(migration)
    anchors = migration["operations"][1]["metadata"]["sourceAnchors"]
    assert [anchor["sourceUri"] for anchor in anchors] == [
        member.thread.record["sourceUri"] for member in members[:MAX_SOURCE_ANCHORS]]
    assert anchors[0]["filePath"] == THREAD_PATH
    trail = evidence_of(shop.root, payload)["concern"]
    assert trail["memberCount"] == len(trail["members"]) == len(members)


def test_both_sources_neither_or_half_a_thread_are_refused_and_nothing_is_drafted(tmp_path: Path) -> None:
    shop = _shop(tmp_path / "shop")
    both = candidate_arguments(shop, concernId=_concern(shop))
    neither = _arguments(shop)
    del neither["concernId"]
    half = candidate_arguments(shop)
    del half["recordKey"]
    assert refused(TOOL, both) == ONE_SOURCE_REFUSAL
    assert refused(TOOL, neither) == ONE_SOURCE_REFUSAL
    assert refused(TOOL, half) == THREAD_PAIR_REFUSAL
    assert proposals(shop.root) == []


def test_an_unknown_concern_id_is_refused_with_its_constant(tmp_path: Path) -> None:
    shop = _shop(tmp_path / "shop")
    assert refused(TOOL, _arguments(shop) | {"concernId": "concern-" + "0" * 24}) == CONCERN_NOT_AVAILABLE_REFUSAL
    assert proposals(shop.root) == []


def test_a_concern_whose_member_threads_all_fail_the_stored_gate_is_refused_naming_each(tmp_path: Path) -> None:
    shop = _shop(tmp_path / "shop", states=("open", "open", "outdated", "open"))
    text = refused(TOOL, _arguments(shop))
    assert text.startswith("PROMOTION_GATE_UNMET:") and _concern(shop) in text
    assert all(f"PRRT_lock{index}: threadResolved is failed" in text for index in range(4))
    assert proposals(shop.root) == []


def test_a_fix_commit_touching_no_passing_member_s_file_is_refused(tmp_path: Path) -> None:
    shop = _shop(tmp_path / "shop")
    text = refused(TOOL, _arguments(shop, fixCommit=shop.other_commit))
    assert text.startswith("FIX_COMMIT_NOT_VERIFIED:") and repr(THREAD_PATH) in text and "src/other2.py" in text
    assert proposals(shop.root) == []
