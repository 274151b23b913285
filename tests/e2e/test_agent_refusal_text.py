"""What an agent reads in a refusal, through a real MCP client against a real daemon: no value the caller sent
(knowledge.generateMigrationDraft's migration-schema refusals name the value's JSON type or length) and no
filesystem path of the installation (a damaged registry), each refusal one phrase, once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, call_tools
from tests.support.sample_project import built_sample_project
from theurian.installation import registry_path

ITEM = "testing.flaky-retries"


def _draft(alias: Any) -> tuple[str, dict[str, Any]]:
    return ("knowledge.generateMigrationDraft", {"projectId": "sample", "author": "a", "description": "d",
                                                 "operations": [{"op": "addAlias", "itemId": ITEM, "alias": alias}]})


def test_a_damaged_registry_is_refused_to_agents_without_the_installations_path(
        installation: Installation, daemon: RunningDaemon, tmp_path: Path) -> None:
    built_sample_project(installation, tmp_path / "sample")
    path = registry_path()
    path.write_bytes(b'[projects."a"\nroot = "/x"\n')
    listed, searched, capabilities = call_tools(daemon.mcp_url, [
        ("project.list", {}), ("review.search", {"projectId": "sample"}), ("system.capabilities", {})])
    for refused in (listed, searched):
        assert refused.is_error is True
        assert str(installation.home) not in refused.text and "projects.toml" not in refused.text
        assert refused.text.count("project registry") == 1
        assert refused.text.startswith("the project registry is not valid TOML (")
        assert refused.text.endswith("the operator must fix it by hand (`theurian doctor` names the file)")
    assert capabilities.is_error is False
    operator = installation.cli("project", "list")
    assert operator.returncode == 1 and str(path) in operator.stderr  # the operator's CLI still names the file


SECRET = "SECRET-VALUE"
_CANDIDATE = {"projectId": "sample", "repository": "o/n", "recordKey": "k", "fixCommit": "a" * 40, "itemId": "i",
              "title": "t", "body": "b", "kind": "convention", "owner": "o", "author": "a"}
_ANCHOR = {"provider": "git", "sourceUri": "https://example.test/x"}


def _evidence(anchor: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    operation = {"op": "addEvidence", "itemId": ITEM, "anchor": anchor, "description": "d", "confidence": 0.5}
    return ("knowledge.generateMigrationDraft", {"projectId": "sample", "author": "a", "description": "d",
                                                 "operations": [operation]})


WIRE_FAULTS = [
    (("review.search", {"projectId": "sample", "limit": SECRET}),
     "Invalid arguments for review.search: `limit` must be of type integer; a string of 12 characters was sent."),
    (("review.search", {"q": SECRET}),
     "Invalid arguments for review.search: the required key `projectId` is missing from the arguments."),
    (("knowledge.get", {"projectId": "sample", "itemId": ""}),
     "Invalid arguments for knowledge.get: `itemId` violates minLength 1; a string of 0 characters was sent."),
    (("review.generateKnowledgeCandidate", {**_CANDIDATE, "category": SECRET}),
     "Invalid arguments for review.generateKnowledgeCandidate: `category` must be one of: specification-gap, "
     "architecture-rule, security-rule, performance-rule, reliability-rule, coding-convention, testing-rule, "
     "domain-rule, rejected-approach, known-exception, incident-prevention; a string of 12 characters was sent."),
    (("review.generateKnowledgeCandidate", {**_CANDIDATE, "category": "testing-rule", "evidenceTrail": ["x", 7]}),
     "Invalid arguments for review.generateKnowledgeCandidate: `evidenceTrail[1]` must be of type string; an "
     "integer was sent."),
    (("project.list", {"b\u202e": SECRET, "a": SECRET}),
     "Invalid arguments for project.list: unknown keys `a`, `b\\u202e` are not accepted by this tool."),
]
DRAFT_FAULTS = [
    (_evidence({"provider": "git"}), "the required key `sourceUri` is missing from `anchor`"),
    (_evidence({**_ANCHOR, "commitSha": SECRET}),
     "`anchor.commitSha` does not match the pattern `^[0-9a-f]{4,64}$`; a string of 12 characters was sent"),
    (_evidence({**_ANCHOR, "lineStart": 0}), "`anchor.lineStart` violates minimum 1"),
    (_evidence({**_ANCHOR, "caf\u00e9": SECRET}), "the key `caf\u00e9` is not allowed in `anchor`"),
]


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_every_schema_fault_an_agent_can_meet_is_one_line_naming_the_place_and_never_the_value(
        installation: Installation, daemon: RunningDaemon, tmp_path: Path, mode: Mode) -> None:
    """The input tier's check (serve.validation) and the migration check behind a draft (knowledge.migrations)
    word a fault the one way `theurian.schema_faults` does, through a real SDK client."""
    built_sample_project(installation, tmp_path / "sample")
    calls = [call for call, _ in WIRE_FAULTS + DRAFT_FAULTS]
    nested, huge, *answers = call_tools(daemon.mcp_url, [_draft({"a": [[[1]]]}), _draft("z" * 1_000_000), *calls],
                                        mode)
    assert nested.is_error and huge.is_error
    assert "invalid at operation 0: `alias` must be of type string; an object of 1 key was sent" in nested.text
    assert "[[" not in nested.text and "'a'" not in nested.text
    assert "a string of 1000000 characters was sent" in huge.text and "zz" not in huge.text and len(huge.text) < 400
    for answer, (_, expected) in zip(answers[:len(WIRE_FAULTS)], WIRE_FAULTS, strict=True):
        assert answer.is_error and answer.text == expected
    for answer, (_, fault) in zip(answers[len(WIRE_FAULTS):], DRAFT_FAULTS, strict=True):
        assert answer.is_error and answer.text.endswith(f"is invalid at operation 0: {fault}; nothing was changed")
    for answer in answers:
        assert SECRET not in answer.text and "\n" not in answer.text and answer.text.isprintable()
