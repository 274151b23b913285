"""The round trip, end to end through the real CLI and a real MCP client against a real daemon: ingest the fixture
corpus from the loopback fake GitHub, build the review store, find a thread with review.search, promote it with
review.generateKnowledgeCandidate, accept the proposal, apply it, and read the item back with knowledge.get — on a
temporary git repository holding the commit that fixed what the thread raised."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.review_ingest_support import ingest, small_corpus
from tests.knowledge.proposal_support import PROPOSAL_SCHEMA, commit_touching, git
from tests.support.daemon import RunningDaemon
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PUBLIC_REPOSITORY, load_fixture
from tests.support.installation import Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, call_tools

THREAD_FILE = "orders/writer.py"  # the resolved thread on the fixture's merged, CI-green pull request 1


@pytest.fixture(scope="module")
def shop(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("round-trip") / "widgets"
    module_installation.new_project_in_process(root, "widgets")
    git(root, "init", "-q")
    fix = commit_touching(root, THREAD_FILE, message="take the lock after the reads")
    other = commit_touching(root, "docs/notes.md", message="unrelated notes")
    module_installation.cli_in_process("review", "allow", PUBLIC_REPOSITORY, "--project", str(root))
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        ingested = ingest(module_installation, root, fake, PUBLIC_REPOSITORY)
    assert ingested.returncode == 0, ingested.stderr
    module_installation.cli_in_process("review", "build", "--project", str(root))
    return {"root": root, "fix": fix, "other": other}


def _thread(daemon: RunningDaemon, mode: Mode) -> dict[str, Any]:
    [found] = call_tools(daemon.mcp_url, [("review.search", {"projectId": "widgets", "filePath": THREAD_FILE,
                                                             "threadState": "resolved"})], mode)
    assert not found.is_error, found.text
    assert found.structured is not None
    [record] = [r for r in found.structured["records"] if r["kind"] == "review-thread"]
    return dict(record)


def _candidate(record: dict[str, Any], fix: str, item_id: str) -> dict[str, Any]:
    return {"projectId": "widgets", "repository": record["repository"], "recordKey": record["recordKey"],
            "fixCommit": fix, "itemId": item_id, "title": "Acquire locks after reads",
            "body": "# Acquire locks after reads\n\nA lock held across slow reads blocks every writer.\n",
            "kind": "convention", "category": "reliability-rule", "owner": "orders-team", "author": "agent-7",
            "evidenceTrail": ["The reviewer asked to move the lock after the reads; the fix did."]}


def test_a_stored_thread_goes_from_review_search_to_an_applied_inferred_item(
        module_daemon: RunningDaemon, module_installation: Installation, shop: dict[str, Any]) -> None:
    root: Path = shop["root"]
    record = _thread(module_daemon, "auto")
    [drafted] = call_tools(module_daemon.mcp_url, [("review.generateKnowledgeCandidate",
                                                    _candidate(record, shop["fix"], "reliability.lock-after-reads"))])
    assert not drafted.is_error, drafted.text
    assert drafted.structured is not None
    PROPOSAL_SCHEMA.validate(drafted.structured)
    proposal = drafted.structured["proposalId"]
    trail = json.loads((root / drafted.structured["evidenceFile"]).read_text(encoding="utf-8"))
    assert (trail["thread"]["recordKey"], trail["thread"]["recordPath"]) == (record["recordKey"],
                                                                             record["recordPath"])

    listed = module_installation.cli("propose", "list", "--project", str(root), "--json", check=True)
    listed_proposal = json.loads(listed.stdout)["summary"]["proposals"][0]
    assert {"proposalId": proposal, "status": "pending"}.items() <= listed_proposal.items()
    accepted = module_installation.cli("propose", "accept", proposal, "--project", str(root), check=True)
    assert drafted.structured["migrationFile"] in accepted.stdout
    again = module_installation.cli("propose", "accept", proposal, "--project", str(root))
    assert again.returncode == 4 and drafted.structured["migrationFile"] in again.stderr
    assert "Traceback" not in again.stderr
    module_installation.cli("migrate", "apply", cwd=root, check=True)

    [item] = call_tools(module_daemon.mcp_url, [("knowledge.get", {"projectId": "widgets",
                                                                   "itemId": "reliability.lock-after-reads"})])
    assert not item.is_error, item.text
    assert item.structured is not None
    assert (item.structured["trustLevel"], item.structured["contentType"]) == ("inferred", "text/markdown")
    [anchor] = item.structured["sourceAnchors"]
    assert (anchor["repository"], anchor["filePath"], anchor["sourceUri"]) == (
        PUBLIC_REPOSITORY, THREAD_FILE, record["sourceUri"])


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_fix_commit_that_touched_other_files_is_refused_in_either_era(
        module_daemon: RunningDaemon, shop: dict[str, Any], mode: Mode) -> None:
    record = _thread(module_daemon, mode)
    [refused] = call_tools(module_daemon.mcp_url, [("review.generateKnowledgeCandidate",
                                                    _candidate(record, shop["other"], f"reliability.other-{mode}"))],
                           mode)
    assert refused.is_error and refused.text.startswith("FIX_COMMIT_NOT_VERIFIED:")


def test_a_gate_signal_or_capability_is_not_spellable_on_the_wire(module_daemon: RunningDaemon,
                                                                  shop: dict[str, Any]) -> None:
    record = _thread(module_daemon, "auto")
    calls = [("review.generateKnowledgeCandidate", _candidate(record, shop["fix"], "reliability.x") | {key: value})
             for key, value in (("trustLevel", "authoritative"), ("ciSuccessful", True), ("local", True),
                                ("sensitivity", "public"), ("contentType", "text/plain"))]
    calls.append(("review.generateKnowledgeCandidate", _candidate(record, shop["fix"], "reliability.x")
                  | {"category": "folklore"}))
    answers = call_tools(module_daemon.mcp_url, calls)
    assert all(answer.is_error and "Invalid arguments" in answer.text for answer in answers)
    assert "`category` must be one of" in answers[-1].text
    [capabilities] = call_tools(module_daemon.mcp_url, [("system.capabilities", {})])
    assert capabilities.structured is not None and capabilities.structured["capabilities"]["writeTools"] is True


def test_an_upper_case_fix_commit_is_folded_as_review_findings_folds_a_commit_sha(
        module_daemon: RunningDaemon, shop: dict[str, Any]) -> None:
    root: Path = shop["root"]
    record = _thread(module_daemon, "auto")
    upper = shop["fix"].upper()
    [drafted] = call_tools(module_daemon.mcp_url, [("review.generateKnowledgeCandidate",
                                                    _candidate(record, upper, "reliability.upper-case-fix"))])
    assert not drafted.is_error, drafted.text
    assert drafted.structured is not None
    trail = json.loads((root / drafted.structured["evidenceFile"]).read_text(encoding="utf-8"))
    assert trail["fixCommit"]["sha"] == shop["fix"]  # recorded as git spells it
    assert THREAD_FILE in trail["fixCommit"]["changedFiles"]
