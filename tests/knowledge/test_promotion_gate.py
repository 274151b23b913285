"""review.generateKnowledgeCandidate behind the real dispatcher: the gate recomputed from stored records, the fix
commit verified with git, every refusal as the contract groups them, and the candidate and evidence it writes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

import evidence.files
from evidence.records import canonical_bytes
from knowledge.candidate import NO_FILE_ANCHOR_REFUSAL
from knowledge.vocabulary import ITEM_KINDS
from projection.errors import THREAD_NOT_AVAILABLE_REFUSAL
from projection.review_store import STORE_RELATIVE
from serve.tools.review_candidate import CANDIDATE_STORE_UNAVAILABLE_REFUSAL
from tests.knowledge.proposal_support import (
    PR_KEY,
    REPOSITORY,
    THREAD_KEY,
    THREAD_PATH,
    Shop,
    candidate_arguments,
    candidate_thread,
    commit_touching,
    drafted,
    evidence_of,
    git,
    merged_pull,
    new_shop,
    proposals,
    refused,
    sha256_of,
)
from theurian.places import PATH_ESCAPE_REFUSAL, REVIEW_SOURCE_ESCAPE_CURE

TOOL = "review.generateKnowledgeCandidate"
Records = list[dict[str, Any]] | None


def test_a_resolved_merged_ci_green_thread_becomes_an_inferred_candidate_anchored_to_the_thread(
        tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    payload = drafted(TOOL, candidate_arguments(shop))
    folder = shop.root / payload["proposalDirectory"]
    document = yaml.safe_load((folder / payload["migrationFile"]).read_text(encoding="utf-8"))
    create, upsert = document["operations"]
    assert create["op"] == "createItem" and create["trustLevel"] == "inferred"
    metadata = upsert["metadata"]
    assert (metadata["trustLevel"], metadata["contentType"]) == ("inferred", "text/markdown")
    assert payload["expectedRevision"] is None and payload["revisionId"] == upsert["revisionId"]
    [anchor] = metadata["sourceAnchors"]
    assert anchor["repository"] == REPOSITORY and anchor["filePath"] == THREAD_PATH
    assert anchor["sourceUri"].startswith(f"https://github.com/{REPOSITORY}/pull/42")
    assert (shop.root / payload["bodyFile"]).read_text(encoding="utf-8") == candidate_arguments(shop)["body"]
    assert sha256_of(shop.root / payload["bodyFile"]) == payload["contentSha256"] == upsert["contentSha256"]


def test_the_evidence_file_holds_the_threads_record_path_key_hash_and_every_signal_with_how_it_was_computed(
        tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    payload = drafted(TOOL, candidate_arguments(shop))
    trail = evidence_of(shop.root, payload)
    record_path = trail["thread"]["recordPath"]
    assert trail["thread"]["recordKey"] == THREAD_KEY
    assert trail["thread"]["contentHash"] == sha256_of(shop.root / ".theurian" / "review" / record_path)
    assert trail["pullRequest"]["recordKey"] == PR_KEY
    assert set(trail["gate"]) == {"pullRequestMerged", "threadResolved", "notDismissedOrOutdated", "ciSuccessful",
                                  "hasEvidence", "fixCommitPresent", "generalizable"}
    assert all(signal["outcome"] == "met" and signal["how"] for signal in trail["gate"].values())
    assert trail["gate"]["threadResolved"]["computedFrom"] == f".theurian/review/{record_path}"
    assert THREAD_PATH in trail["fixCommit"]["changedFiles"] and trail["fixCommit"]["sha"] == shop.fix_commit
    assert trail["reasoning"][1:] == candidate_arguments(shop)["evidenceTrail"]


@pytest.mark.parametrize("signal, pulls, threads, why", [
    ("pullRequestMerged", [merged_pull(merged=False)], None, "merged: false"),
    ("threadResolved", None, [candidate_thread(state="open")], "state is `open`"),
    ("notDismissedOrOutdated", None, [candidate_thread(state="outdated")], "state is `outdated`"),
    ("notDismissedOrOutdated", None, [candidate_thread(state="dismissed")], "state is `dismissed`"),
    ("hasEvidence", None, [candidate_thread(comments=0)], "holds 0 comment(s)"),
    ("ciSuccessful", [merged_pull(rollup="FAILURE")], None, "rollup is `FAILURE`"),
])
def test_each_gate_signal_unmet_on_its_own_is_named_with_why_the_stored_record_makes_it_so(
        tmp_path: Path, signal: str, pulls: Records, threads: Records, why: str) -> None:
    shop = new_shop(tmp_path / "shop", pulls=pulls, threads=threads)
    text = refused(TOOL, candidate_arguments(shop))
    assert text.startswith("PROMOTION_GATE_UNMET:")
    named = {name for name in ("pullRequestMerged", "threadResolved", "notDismissedOrOutdated", "ciSuccessful",
                               "hasEvidence") if f"{name} is " in text}
    expected = {signal} | ({"threadResolved"} if signal == "notDismissedOrOutdated" else set())
    assert named == expected and why in text
    assert proposals(shop.root) == []


@pytest.mark.parametrize("rollup, outcome", [
    ("SUCCESS", None), ("FAILURE", "failed"), ("ERROR", "failed"),
    ("PENDING", "unknown"), ("EXPECTED", "unknown"), (None, "unknown"),
])
def test_ci_is_met_only_on_success_and_an_unknown_outcome_is_told_apart_from_a_failed_one(
        tmp_path: Path, rollup: str | None, outcome: str | None) -> None:
    shop = new_shop(tmp_path / "shop", pulls=[merged_pull(rollup=rollup)])
    if outcome is None:
        drafted(TOOL, candidate_arguments(shop))
        return
    text = refused(TOOL, candidate_arguments(shop))
    assert f"ciSuccessful is {outcome}:" in text
    assert ("go and get a CI result" in text) == (outcome == "unknown")
    assert ("is not a candidate" in text) == (outcome == "failed")


def test_a_thread_whose_pull_request_is_not_stored_fails_merged_and_leaves_ci_unknown(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop", pulls=[])
    text = refused(TOOL, candidate_arguments(shop))
    assert "pullRequestMerged is failed" in text and "ciSuccessful is unknown" in text
    assert "(The CI outcome is also unknown, not failed.)" in text


def test_an_absent_fix_commit_and_one_that_touched_other_files_are_one_refusal(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    absent = "0" * 40
    untouched = refused(TOOL, candidate_arguments(shop, fixCommit=shop.other_commit))
    missing = refused(TOOL, candidate_arguments(shop, fixCommit=absent))
    assert untouched.startswith("FIX_COMMIT_NOT_VERIFIED:") and missing.startswith("FIX_COMMIT_NOT_VERIFIED:")
    assert untouched.replace(shop.other_commit, "SHA") == missing.replace(absent, "SHA")
    assert proposals(shop.root) == []


def test_a_merge_touches_only_what_it_brought_into_its_first_parent(tmp_path: Path) -> None:
    """Merging an unrelated branch changes nothing the main line had not already got; merging the fix's branch
    brings the fix in."""
    shop = new_shop(tmp_path / "shop")
    main = git(shop.root, "rev-parse", "--abbrev-ref", "HEAD")
    git(shop.root, "checkout", "-q", "-b", "unrelated")
    commit_touching(shop.root, "docs/unrelated.md", message="unrelated work")
    git(shop.root, "checkout", "-q", "-b", "fix-branch", main)
    commit_touching(shop.root, THREAD_PATH, message="the fix, on its branch")
    git(shop.root, "checkout", "-q", main)
    commit_touching(shop.root, THREAD_PATH, message="the main line changes the thread's file meanwhile")
    git(shop.root, "merge", "-q", "--no-ff", "unrelated", "-m", "merge unrelated work")
    unrelated_merge = git(shop.root, "rev-parse", "HEAD")
    refused_text = refused(TOOL, candidate_arguments(shop, fixCommit=unrelated_merge))
    assert refused_text.startswith("FIX_COMMIT_NOT_VERIFIED:")
    git(shop.root, "merge", "-q", "--no-ff", "-X", "theirs", "fix-branch", "-m", "merge the fix")
    fix_merge = git(shop.root, "rev-parse", "HEAD")
    payload = drafted(TOOL, candidate_arguments(shop, fixCommit=fix_merge))
    assert THREAD_PATH in evidence_of(shop.root, payload)["fixCommit"]["changedFiles"]


def test_an_annotated_tag_is_not_a_commit_even_though_it_names_one(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    git(shop.root, "tag", "-a", "-m", "the fix", "fixed", shop.fix_commit)
    tag_object = git(shop.root, "rev-parse", "fixed")
    assert tag_object != shop.fix_commit
    assert refused(TOOL, candidate_arguments(shop, fixCommit=tag_object)).startswith("FIX_COMMIT_NOT_VERIFIED:")
    assert proposals(shop.root) == []


def test_a_short_sha_is_refused_before_git_is_asked(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    text = refused(TOOL, candidate_arguments(shop, fixCommit=shop.fix_commit[:12]))
    assert "full 40- or 64-character hex sha (either case)" in text


def test_a_thread_with_no_file_anchor_is_refused_in_its_own_words(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop", threads=[candidate_thread(path="")])
    assert refused(TOOL, candidate_arguments(shop)) == NO_FILE_ANCHOR_REFUSAL


@pytest.mark.parametrize("repository, key", [
    (REPOSITORY, "PRRT_kwDOAcmeNoSuch"),  # an unknown key
    (REPOSITORY, PR_KEY),  # the key of a pull request, not a thread
    ("acme/order-service", THREAD_KEY),  # not the repository as the store spells it
])
def test_an_unknown_key_and_a_key_of_another_kind_are_one_refusal(tmp_path: Path, repository: str,
                                                                  key: str) -> None:
    shop = new_shop(tmp_path / "shop")
    text = refused(TOOL, candidate_arguments(shop, repository=repository, recordKey=key))
    assert text == THREAD_NOT_AVAILABLE_REFUSAL


def test_a_kind_outside_the_vocabulary_is_refused_naming_the_valid_kinds(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    text = refused(TOOL, candidate_arguments(shop, kind="lore"))
    assert "'lore' is not an item kind" in text and ", ".join(ITEM_KINDS) in text


def test_a_store_this_installation_did_not_build_refuses_and_drafts_nothing(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    (shop.root / STORE_RELATIVE).unlink()
    assert refused(TOOL, candidate_arguments(shop)) == CANDIDATE_STORE_UNAVAILABLE_REFUSAL
    assert proposals(shop.root) == []


def test_a_record_file_gone_from_the_lake_since_the_build_is_not_believed(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    for path in (shop.root / ".theurian" / "review").glob("*/review-thread/*.json"):
        path.unlink()
    assert refused(TOOL, candidate_arguments(shop)) == CANDIDATE_STORE_UNAVAILABLE_REFUSAL


def _thread_file(shop: Shop) -> Path:
    [path] = (shop.root / ".theurian" / "review").glob("*/review-thread/*.json")
    return path


def test_a_thread_file_edited_since_the_build_is_not_believed_and_drafts_nothing(tmp_path: Path) -> None:
    """The gate is computed from the file, so the file must be the record the verified store holds: here the
    store says `open`, and an edit saying `resolved` would otherwise meet the threadResolved signal."""
    shop = new_shop(tmp_path / "shop", threads=[candidate_thread(state="open")])
    path = _thread_file(shop)
    path.write_bytes(canonical_bytes({**orjson.loads(path.read_bytes()), "state": "resolved"}))
    assert refused(TOOL, candidate_arguments(shop)) == CANDIDATE_STORE_UNAVAILABLE_REFUSAL
    assert proposals(shop.root) == []


def _pull_file(shop: Shop) -> Path:
    [path] = (shop.root / ".theurian" / "review").glob("*/pull-request/*.json")
    return path


@pytest.mark.parametrize("pulls, edit", [
    # Neither field is a store column, yet each decides a gate signal: the file's hash is what the store vouches for.
    ([merged_pull(rollup=None)], {"statusCheckRollupState": "SUCCESS"}),
    ([merged_pull(merged=False)], {"merged": True, "state": "MERGED"}),
])
def test_a_pull_request_file_edited_since_the_build_is_not_believed_and_drafts_nothing(
        tmp_path: Path, pulls: list[dict[str, Any]], edit: dict[str, Any]) -> None:
    shop = new_shop(tmp_path / "shop", pulls=pulls)
    path = _pull_file(shop)
    path.write_bytes(canonical_bytes({**orjson.loads(path.read_bytes()), **edit}))
    assert refused(TOOL, candidate_arguments(shop)) == CANDIDATE_STORE_UNAVAILABLE_REFUSAL
    assert proposals(shop.root) == []


def test_a_thread_field_the_store_has_no_column_for_is_not_believed_once_edited(tmp_path: Path) -> None:
    """The anchor's lines come from the file alone: an edit there would put other lines in the proposal."""
    shop = new_shop(tmp_path / "shop")
    path = _thread_file(shop)
    path.write_bytes(canonical_bytes({**orjson.loads(path.read_bytes()), "originalLine": 999}))
    assert refused(TOOL, candidate_arguments(shop)) == CANDIDATE_STORE_UNAVAILABLE_REFUSAL
    assert proposals(shop.root) == []


def test_a_record_file_rewritten_with_the_same_bytes_is_still_believed(tmp_path: Path) -> None:
    """What is compared is the content, not the file's identity: an ingest that rewrites a record unchanged (or a
    checkout) leaves the candidate drafting."""
    shop = new_shop(tmp_path / "shop")
    for path in (_thread_file(shop), _pull_file(shop)):
        data = path.read_bytes()
        path.unlink()
        path.write_bytes(data)
    drafted(TOOL, candidate_arguments(shop))


def test_a_fifo_at_the_thread_path_is_refused_never_waited_on(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    path = _thread_file(shop)
    path.unlink()
    os.mkfifo(path)  # nobody writes to it: opening it for reading would wait forever
    assert refused(TOOL, candidate_arguments(shop)) == CANDIDATE_STORE_UNAVAILABLE_REFUSAL
    assert proposals(shop.root) == []


def test_a_thread_file_past_the_record_bound_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build's own bound: the same valid file drafts under it and is refused past it (shrunk here, so the test
    need not write 256 MiB; the bound is read where the file is, as the build reads it)."""
    shop = new_shop(tmp_path / "shop")
    size = _thread_file(shop).stat().st_size
    monkeypatch.setattr(evidence.files, "MAX_RECORD_FILE_BYTES", size - 1)
    assert refused(TOOL, candidate_arguments(shop)) == CANDIDATE_STORE_UNAVAILABLE_REFUSAL
    monkeypatch.setattr(evidence.files, "MAX_RECORD_FILE_BYTES", size)
    drafted(TOOL, candidate_arguments(shop))


def test_a_repository_folder_linked_out_of_the_lake_gets_the_cure_for_source(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    folder = _thread_file(shop).parents[1]
    outside = tmp_path / "outside"
    shutil.move(folder, outside)
    folder.symlink_to(outside, target_is_directory=True)
    assert refused(TOOL, candidate_arguments(shop)) == f"{PATH_ESCAPE_REFUSAL} {REVIEW_SOURCE_ESCAPE_CURE}"
    assert proposals(shop.root) == []


def test_an_item_id_that_already_exists_is_refused(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    text = refused(TOOL, candidate_arguments(shop, itemId=shop.item_id))
    assert "already exists" in text and "knowledge.proposeChange" in text


def test_a_project_outside_any_git_repository_cannot_verify_its_fix_commit(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    (shop.root / ".git").rename(shop.root / "not-git")
    text = refused(TOOL, candidate_arguments(shop))
    assert "not inside a git repository" in text
