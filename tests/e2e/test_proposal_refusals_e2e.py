"""The write tools' refusals as an agent reads them through the SDK client and a real daemon: a project with no
built state named as knowledge.get names it, REVISION_CONFLICT's envelope in the one coded-refusal serialisation
(the code once, the caller's `""` quoted as sent), and a control character in a field refused before a draft;
and what a successful draft's answer says it did not check, or what its files hide from a reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowledge.proposal_hidden import hidden_step
from knowledge.proposals import ITEM_IDS_UNCHECKED_STEP
from serve.refusal import coded_refusal_text
from tests.knowledge.authoring import copy_sample
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import call_tools
from theurian.hidden_characters import BIDI_CONTROL, FIELD


@pytest.fixture(scope="module")
def projects(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("proposal-refusals")
    empty = folder / "empty"
    (empty / ".theurian").mkdir(parents=True)
    module_installation.cli_in_process("project", "register", str(empty), "--id", "empty")
    shop = copy_sample(folder / "shop")
    module_installation.cli_in_process("project", "register", str(shop), "--id", "shop")
    module_installation.cli_in_process("migrate", "apply", "--project", str(shop))
    return shop


def _proposals(root: Path) -> list[Path]:
    return sorted((root / ".theurian/proposals").glob("*")) if (root / ".theurian/proposals").exists() else []


def test_propose_change_on_a_project_with_no_state_names_migrate_apply_as_knowledge_get_does(
        module_daemon: RunningDaemon, projects: Path) -> None:
    change, get = call_tools(module_daemon.mcp_url, [
        ("knowledge.proposeChange", {"projectId": "empty", "itemId": "testing.flaky-retries",
                                     "expectedRevision": None, "body": "Retry twice.", "author": "agent-7"}),
        ("knowledge.get", {"projectId": "empty", "itemId": "testing.flaky-retries"}),
    ])
    assert change.is_error and get.is_error
    assert change.text == get.text == (
        "project 'empty' has no built knowledge state; run `theurian migrate apply` in its folder")


def test_revision_conflict_is_the_coded_envelope_quoting_an_empty_expected_revision_as_sent(
        module_daemon: RunningDaemon, projects: Path) -> None:
    current = call_tools(module_daemon.mcp_url, [
        ("knowledge.get", {"projectId": "shop", "itemId": "architecture.auth-policy"})])[0]
    actual = current.valid("knowledge-get-response.schema.json")["revisionId"]
    empty, null, unknown = call_tools(module_daemon.mcp_url, [
        ("knowledge.proposeChange", {"projectId": "shop", "itemId": "architecture.auth-policy",
                                     "expectedRevision": expected, "body": "New.", "author": "agent-7"})
        for expected in ("", None, None)
    ][:2] + [("knowledge.search", {"projectId": "nope", "query": "x"})])
    envelope = json.loads(empty.text)
    message = (f"revision conflict on architecture.auth-policy: expectedRevision is '' but the current revision "
               f"is {actual}; nothing was drafted. Read the item again (knowledge.get) and draft against its "
               "current revision.")
    details = {"itemId": "architecture.auth-policy", "expected": "", "actual": actual}
    assert empty.text == coded_refusal_text("REVISION_CONFLICT", message, details)
    assert envelope == {"error": {"code": "REVISION_CONFLICT", "message": message, "details": details}}
    assert "expectedRevision is null but" in json.loads(null.text)["error"]["message"]
    # Another code in the same envelope and serialisation, pinned byte for byte: its code, message and details.
    assert unknown.text == (
        '{"error": {"code": "PROJECT_NOT_REGISTERED", "message": "no project is registered under id \'nope\'; '
        'project.list names the registered projects", "details": {"projectId": "nope"}}}')
    assert _proposals(projects) == []


@pytest.mark.parametrize(("field", "value"), [("author", "a\x00b"), ("title", "T\x9bitle")])
def test_a_control_character_in_a_write_tools_field_is_refused_and_nothing_is_drafted(
        module_daemon: RunningDaemon, projects: Path, field: str, value: str) -> None:
    current = call_tools(module_daemon.mcp_url, [
        ("knowledge.get", {"projectId": "shop", "itemId": "architecture.auth-policy"})])[0]
    arguments = {"projectId": "shop", "itemId": "architecture.auth-policy", "body": "New.", "author": "agent-7",
                 "expectedRevision": current.valid("knowledge-get-response.schema.json")["revisionId"]}
    answer = call_tools(module_daemon.mcp_url, [("knowledge.proposeChange", arguments | {field: value})])[0]
    assert answer.is_error and f"`{field}` holds the control character U+00" in answer.text
    assert value not in answer.text and _proposals(projects) == []


def test_a_migration_draft_naming_an_item_that_does_not_exist_says_item_ids_were_not_checked(
        module_daemon: RunningDaemon, module_installation: Installation, tmp_path: Path) -> None:
    """Drafted (a draft cannot reveal which hidden ids exist), and the answer says so and names where the ids are
    checked; `propose accept` then refuses it."""
    shop = copy_sample(tmp_path / "drafts")
    module_installation.cli_in_process("project", "register", str(shop), "--id", "drafts")
    module_installation.cli_in_process("migrate", "apply", "--project", str(shop))
    [drafted] = call_tools(module_daemon.mcp_url, [
        ("knowledge.generateMigrationDraft", {
            "projectId": "drafts", "author": "agent-7", "description": "Alias a missing item",
            "operations": [{"op": "addAlias", "alias": "missing", "itemId": "testing.no-such-item"}]}),
    ])
    payload = drafted.valid("proposal-response.schema.json")
    assert ITEM_IDS_UNCHECKED_STEP in payload["nextSteps"]
    accepted = module_installation.cli("propose", "accept", payload["proposalId"], "--project", str(shop))
    assert accepted.returncode == 1
    assert "item testing.no-such-item does not exist" in accepted.stderr and "nothing was moved" in accepted.stderr


def test_a_drafted_body_holding_a_bidi_override_is_drafted_byte_for_byte_and_flagged_where_the_reviewer_reads(
        module_daemon: RunningDaemon, module_installation: Installation, tmp_path: Path) -> None:
    """Not refused (`migrate apply` takes the same text, and served rows label it rather than alter it): the
    answer's nextSteps and the trail's `hiddenCharacters` name the file and the class."""
    shop = copy_sample(tmp_path / "bidi")
    module_installation.cli_in_process("project", "register", str(shop), "--id", "bidi")
    module_installation.cli_in_process("migrate", "apply", "--project", str(shop))
    current = call_tools(module_daemon.mcp_url, [
        ("knowledge.get", {"projectId": "bidi", "itemId": "architecture.auth-policy"})])[0]
    arguments = {"projectId": "bidi", "itemId": "architecture.auth-policy", "author": "agent-7",
                 "expectedRevision": current.valid("knowledge-get-response.schema.json")["revisionId"]}
    body = "Tokens are checked \u202e.gnitirw yna erofeb\u202c by the gateway.\n"
    flagged, clean = (answer.valid("proposal-response.schema.json") for answer in call_tools(
        module_daemon.mcp_url, [("knowledge.proposeChange", arguments | {"body": text})
                                for text in (body, "Tokens are checked by the gateway.\n")]))
    body_file = flagged["bodyFile"].removeprefix(f"{flagged['proposalDirectory']}/")
    assert (shop / flagged["bodyFile"]).read_text(encoding="utf-8") == body
    assert hidden_step({body_file: [BIDI_CONTROL]}) in flagged["nextSteps"]
    assert BIDI_CONTROL in flagged["nextSteps"][1] and body_file in flagged["nextSteps"][1]
    trail = json.loads((shop / flagged["evidenceFile"]).read_text(encoding="utf-8"))
    assert trail[FIELD] == {body_file: [BIDI_CONTROL]}
    assert len(clean["nextSteps"]) == len(flagged["nextSteps"]) - 1
    assert json.loads((shop / clean["evidenceFile"]).read_text(encoding="utf-8"))[FIELD] == {}
