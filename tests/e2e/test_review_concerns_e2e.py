"""Recurring concerns end to end: the labelled concern set ingested by the real CLI from the loopback fake GitHub, the
store built by the real CLI, then a real MCP client lists the concerns and drafts a candidate from one, which lands
through `propose accept` and `migrate apply` with every member thread in its evidence, and knowledge.search finds
it; `theurian review concerns` answers as the tool does."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import schemas
from serve.tools.review_concerns import LIST_CONCERNS_UNAVAILABLE_REFUSAL
from tests.e2e.review_ingest_support import copy_project, ingested_and_built, registered_with_a_damaged_store
from tests.knowledge.proposal_support import PROPOSAL_SCHEMA, commit_touching, git
from tests.support.concern_set import pull_requests
from tests.support.daemon import RunningDaemon
from tests.support.installation import THEURIAN_BIN, Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, call_tools
from theurian.cli.read_commands import UNTRUSTED_NOTE

REPOSITORY = "Acme/Concerns"
PROJECT = "concerns"
LISTED = jsonschema.Draft202012Validator(schemas.load("mcp", "review-list-concerns-response.schema.json"))


@pytest.fixture(scope="module")
def project(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    pulls, node_ids = pull_requests(REPOSITORY, 1)
    root = tmp_path_factory.mktemp("concerns") / "p"
    built = ingested_and_built(module_installation, root, REPOSITORY, pulls)
    git(root, "init", "-q")
    module_installation.cli_in_process("project", "register", str(root), "--id", PROJECT)
    return {"root": root, "node_ids": node_ids, "built": built}


def _listed(daemon: RunningDaemon, mode: Mode = "auto", **filters: Any) -> dict[str, Any]:
    [found] = call_tools(daemon.mcp_url, [("review.listConcerns", {"projectId": PROJECT, "limit": 20, **filters})],
                         mode)
    assert found.is_error is False, found.text
    assert found.structured is not None
    LISTED.validate(found.structured)
    return dict(found.structured)


def test_the_build_reports_the_concerns_it_found(project: dict[str, Any]) -> None:
    lines = project["built"].stdout.strip().splitlines()
    assert lines[-3].startswith("concerns: ") and int(lines[-3].split()[1]) > 0


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_real_client_lists_the_concerns_and_sees_the_capability(module_daemon: RunningDaemon,
                                                                  project: dict[str, Any], mode: Mode) -> None:
    listed = _listed(module_daemon, mode)
    assert listed["count"] > 0
    assert all(member["repository"] == REPOSITORY for row in listed["concerns"] for member in row["members"])
    [capabilities] = call_tools(module_daemon.mcp_url, [("system.capabilities", {})], mode)
    assert capabilities.structured is not None
    assert capabilities.structured["capabilities"]["reviewConcerns"] is True
    assert "review.listConcerns" in capabilities.structured["tools"]


def test_the_cli_lists_the_same_concerns_as_the_tool(module_installation: Installation,
                                                     module_daemon: RunningDaemon, project: dict[str, Any]) -> None:
    root: Path = project["root"]
    as_json = module_installation.cli("review", "concerns", "--limit", "20", "--json", "--project", str(root),
                                      check=True)
    assert json.loads(as_json.stdout)["summary"] == _listed(module_daemon)
    table = module_installation.cli("review", "concerns", "--project", str(root), check=True)
    lines = table.stdout.strip().splitlines()
    assert lines[0].split() == ["concern", "PRs", "revs", "repos", "members", "gate", "excerpt"]
    assert lines[1].startswith("concern-")
    assert lines[-3].endswith(UNTRUSTED_NOTE)
    assert lines[-2].startswith("next: theurian propose candidate --concern concern-")
    as_csv = module_installation.cli("review", "concerns", "--limit", "20", "--csv", "--project", str(root),
                                     check=True)
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert [row["concernId"] for row in rows] == [row["concernId"] for row in _listed(module_daemon)["concerns"]]


def _pasted(installation: Installation, line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`line` as an operator pastes it into a shell (bash), the installation's `theurian` first on the PATH."""
    env = installation.env | {"PATH": f"{THEURIAN_BIN.parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, encoding="utf-8",
                          timeout=120)


def test_the_next_line_drafts_the_first_draftable_concern_when_pasted_filled_in(
        module_installation: Installation, module_daemon: RunningDaemon, project: dict[str, Any],
        tmp_path: Path) -> None:
    # Said before: "draft one with `theurian propose candidate --concern ID`", which fails pasted (eight options
    # more are required). Now the whole command, the concern and the project filled in, the rest marked.
    root: Path = project["root"]
    table = module_installation.cli("review", "concerns", "--project", str(root), check=True)
    command, meant = table.stdout.strip().splitlines()[-2:]
    concern = next(row for row in _listed(module_daemon)["concerns"] if row["gatePassing"] > 0)
    assert command.startswith(f"next: theurian propose candidate --concern {concern['concernId']} --project {root} ")
    assert meant.startswith("  fill in each CAPITAL word first: FIX_SHA the full sha of the commit that fixed")
    line = command.removeprefix("next: ")

    unfilled = _pasted(module_installation, line, tmp_path)  # pasted as printed: nothing drafted, each word named
    assert unfilled.returncode == 2 and unfilled.stderr.count("\n") == 1, unfilled.stderr
    assert unfilled.stderr.startswith("theurian: fill in --fix-commit FIX_SHA, --item-id ITEM_ID, --title TITLE, "
                                      "--body-file BODY_FILE, --kind KIND, --category CATEGORY, --owner OWNER, "
                                      "--author AUTHOR first: ")

    [found] = call_tools(module_daemon.mcp_url, [("review.search", {
        "projectId": PROJECT, "repository": REPOSITORY, "pullRequest": concern["members"][0]["pullRequest"]})])
    assert found.structured is not None
    path = next(r["filePath"] for r in found.structured["records"] if r["kind"] == "review-thread")
    body = tmp_path / "rule.md"
    body.write_text("# Pasted\n\nThe rule.\n", encoding="utf-8")
    values = {"FIX_SHA": commit_touching(root, path, message="fix it, then paste the line"),
              "ITEM_ID": "convention.pasted-line", "TITLE": "'The pasted rule'", "BODY_FILE": str(body),
              "KIND": "convention", "CATEGORY": "coding-convention", "OWNER": "platform-team", "AUTHOR": "operator"}
    filled = " ".join(values.get(word, word) for word in line.split(" "))
    drafted = _pasted(module_installation, filled + " --json", tmp_path)  # from outside the project: --project
    assert drafted.returncode == 0, drafted.stderr
    payload = json.loads(drafted.stdout)["summary"]
    trail = json.loads((root / payload["evidenceFile"]).read_text(encoding="utf-8"))
    assert trail["concern"]["concernId"] == concern["concernId"]


def test_the_cli_refuses_a_limit_past_its_bound_with_the_tools_words_exit_1(
        module_installation: Installation, module_daemon: RunningDaemon, project: dict[str, Any]) -> None:
    [tool] = call_tools(module_daemon.mcp_url, [("review.listConcerns", {"projectId": PROJECT, "limit": 21})])
    assert tool.is_error is True
    assert tool.text == ("review.listConcerns: `limit` must be between 1 and 20; the default is 10. Nothing was "
                         "clamped; send a limit in that range.")
    over = module_installation.cli("review", "concerns", "--limit", "21", "--project", str(project["root"]))
    assert (over.returncode, over.stderr.splitlines()) == (1, [f"theurian: {tool.text}"])


def test_the_cli_refuses_a_folder_no_registration_names_even_with_a_built_store(
        module_installation: Installation, project: dict[str, Any], tmp_path: Path) -> None:
    copied = copy_project(project["root"], tmp_path / "copied")
    printed = module_installation.cli("review", "concerns", "--json", "--project", str(copied))
    refusal = (f"{copied} is not registered, so no agent can read it: run `theurian project register {copied}` "
               "first")
    assert printed.returncode == 1
    assert json.loads(printed.stdout)["ok"] is False and json.loads(printed.stdout)["summary"]["error"] == refusal


def test_a_candidate_drafted_from_a_concern_lands_through_accept_and_apply_with_every_member(
        module_daemon: RunningDaemon, module_installation: Installation, project: dict[str, Any]) -> None:
    root: Path = project["root"]
    concern = next(row for row in _listed(module_daemon)["concerns"] if row["gatePassing"] > 0)
    first = concern["members"][0]
    [found] = call_tools(module_daemon.mcp_url, [("review.search", {
        "projectId": PROJECT, "repository": REPOSITORY, "pullRequest": first["pullRequest"]})])
    assert found.structured is not None
    [record] = [r for r in found.structured["records"] if r["recordKey"] == first["recordKey"]]
    fix = commit_touching(root, record["filePath"], message="fix what the recurring concern raised")
    arguments = {"projectId": PROJECT, "concernId": concern["concernId"], "fixCommit": fix,
                 "itemId": "convention.recurring-concern", "title": "The team's recurring review rule",
                 "body": "# The recurring review rule\n\nWhat reviewers kept asking for, written down once.\n",
                 "kind": "convention", "category": "coding-convention", "owner": "platform-team",
                 "author": "agent-7", "evidenceTrail": ["The same concern was raised in several pull requests."]}
    [drafted] = call_tools(module_daemon.mcp_url, [("review.generateKnowledgeCandidate", arguments)])
    assert drafted.is_error is False, drafted.text
    assert drafted.structured is not None
    PROPOSAL_SCHEMA.validate(drafted.structured)
    trail = json.loads((root / drafted.structured["evidenceFile"]).read_text(encoding="utf-8"))
    assert [m["thread"]["recordKey"] for m in trail["concern"]["members"]] == [
        m["recordKey"] for m in concern["members"]]
    assert trail["thread"]["recordKey"] == first["recordKey"]

    proposal = drafted.structured["proposalId"]
    module_installation.cli("propose", "accept", proposal, "--project", str(root), check=True)
    module_installation.cli("migrate", "apply", cwd=root, check=True)
    [searched] = call_tools(module_daemon.mcp_url, [("knowledge.search", {"projectId": PROJECT,
                                                                          "query": "recurring review rule"})])
    assert searched.structured is not None, searched.text
    assert "convention.recurring-concern" in json.dumps(searched.structured)
    [item] = call_tools(module_daemon.mcp_url, [("knowledge.get", {"projectId": PROJECT,
                                                                   "itemId": "convention.recurring-concern"})])
    assert item.structured is not None and item.structured["trustLevel"] == "inferred"
    assert len(item.structured["sourceAnchors"]) == sum(1 for m in concern["members"] if m["kind"] == "review-thread")


def test_propose_candidate_with_concern_refuses_both_sources_in_one_line(module_installation: Installation,
                                                                        project: dict[str, Any]) -> None:
    body = project["root"] / "body.md"
    body.write_text("# x\n", encoding="utf-8")
    both = module_installation.cli(
        "propose", "candidate", "--concern", "concern-" + "0" * 24, "--repository", REPOSITORY, "--record-key", "k",
        "--fix-commit", "0" * 40, "--item-id", "x.y", "--title", "t", "--body-file", str(body), "--kind",
        "convention", "--category", "coding-convention", "--owner", "o", "--author", "a",
        "--project", str(project["root"]))
    assert both.returncode == 2 and both.stderr.strip().count("\n") == 0 and "exactly one source" in both.stderr


def test_propose_candidate_with_concern_drafts_what_the_tool_drafts(module_daemon: RunningDaemon,
                                                                   module_installation: Installation,
                                                                   project: dict[str, Any]) -> None:
    root: Path = project["root"]
    concern = next(row for row in _listed(module_daemon)["concerns"] if row["gatePassing"] > 0)
    [found] = call_tools(module_daemon.mcp_url, [("review.search", {
        "projectId": PROJECT, "repository": REPOSITORY, "pullRequest": concern["members"][0]["pullRequest"]})])
    assert found.structured is not None
    path = next(r["filePath"] for r in found.structured["records"] if r["kind"] == "review-thread")
    fix = commit_touching(root, path, message="fix it at the CLI")
    body = root / "cli-body.md"
    body.write_text("# Written down\n\nThe rule.\n", encoding="utf-8")
    drafted = module_installation.cli(
        "propose", "candidate", "--concern", concern["concernId"], "--fix-commit", fix, "--item-id",
        "convention.from-the-cli", "--title", "Written down", "--body-file", str(body), "--kind", "convention",
        "--category", "coding-convention", "--owner", "o", "--author", "a", "--json", "--project", str(root),
        check=True)
    payload = json.loads(drafted.stdout)["summary"]
    PROPOSAL_SCHEMA.validate(payload)
    trail = json.loads((root / payload["evidenceFile"]).read_text(encoding="utf-8"))
    assert trail["draftedBy"] == "theurian propose candidate"
    assert trail["concern"]["memberCount"] == concern["memberCount"] == len(trail["concern"]["members"])


def test_the_cli_answers_a_damaged_store_with_the_tools_refusal(
        module_installation: Installation, module_daemon: RunningDaemon, project: dict[str, Any],
        tmp_path: Path) -> None:
    damaged = registered_with_a_damaged_store(module_installation, project["root"], tmp_path / "damaged",
                                              "damaged-concerns")
    [tool] = call_tools(module_daemon.mcp_url, [("review.listConcerns", {"projectId": "damaged-concerns"})])
    assert (tool.is_error, tool.text) == (True, LIST_CONCERNS_UNAVAILABLE_REFUSAL)
    printed = module_installation.cli("review", "concerns", "--project", str(damaged))
    # The tool's words, its cure carrying the project the command was given (`theurian.cli.pasteable`).
    refusal = LIST_CONCERNS_UNAVAILABLE_REFUSAL.replace("`theurian review build`",
                                                        f"`theurian review build --project {damaged}`")
    assert (printed.returncode, printed.stderr.splitlines()) == (1, [f"theurian: {refusal}"])
