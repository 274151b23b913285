"""review.findSimilar end to end: the labelled threads ingested by the real CLI from the loopback fake GitHub, the
store built by the real CLI, then a real MCP client (both protocol eras) and `theurian review similar`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

import schemas
from serve.tools.review_similar import FIND_SIMILAR_UNAVAILABLE_REFUSAL, SITUATION_WITHOUT_WORDS_REFUSAL
from tests.e2e.review_ingest_support import (
    copy_project,
    ingested_and_built,
    new_project,
    registered_with_a_damaged_store,
)
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, call_tools
from tests.support.similar_set import pull_requests
from theurian.cli.read_commands import UNTRUSTED_NOTE
from theurian.embedding import DEFAULT_MODEL_NAME

REPOSITORY = "Acme/Labelled"
RESPONSE = jsonschema.Draft202012Validator(schemas.load("mcp", "review-find-similar-response.schema.json"))
# Shares no word with the thread it must find (t088: "Rendering exception.backtrace to the visitor shows file
# paths, gem versions and SQL. Show a generic page and keep the details server-side.").
PARAPHRASE = "showing the raw stack trace to users when something goes wrong"
EXPECTED_PATH = "app/controllers/application_controller.rb"
# Situations with no word to compare by. On this store "..." and "[]" came back with five records each (the
# nearest just above the floor) and "?!" with an empty answer, as though each had been compared.
WORDLESS = ("...", "[]", "?!", "the ...", " \t ", "— «» —")


@pytest.fixture(scope="module")
def project(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    pulls, node_ids = pull_requests(REPOSITORY, 1)
    root = tmp_path_factory.mktemp("similar") / "p"
    built = ingested_and_built(module_installation, root, REPOSITORY, pulls)
    module_installation.cli_in_process("project", "register", str(root), "--id", "labelled")
    unbuilt = new_project(module_installation, tmp_path_factory.mktemp("unbuilt") / "p")
    module_installation.cli_in_process("project", "register", str(unbuilt), "--id", "unbuilt")
    return {"root": root, "node_ids": node_ids, "built": built}


def test_the_build_embeds_every_ingested_thread(project: dict[str, Any]) -> None:
    lines = project["built"].stdout.strip().splitlines()
    assert lines[-2] == f"embeddings: {len(project['node_ids'])} made, 0 reused from the store it replaces"


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_real_client_finds_the_paraphrased_thread_first(module_daemon: RunningDaemon, project: dict[str, Any],
                                                          mode: Mode) -> None:
    found, nothing, unbuilt, capabilities = call_tools(module_daemon.mcp_url, [
        ("review.findSimilar", {"projectId": "labelled", "situation": PARAPHRASE}),
        ("review.findSimilar", {"projectId": "labelled",
                                "situation": "tuning the CUDA kernel launch parameters for the training job"}),
        ("review.findSimilar", {"projectId": "unbuilt", "situation": PARAPHRASE}),
        ("system.capabilities", {}),
    ], mode)
    assert found.is_error is False and found.structured is not None
    RESPONSE.validate(found.structured)
    assert orjson.loads(found.text) == found.structured
    first = found.structured["records"][0]
    assert first["recordKey"] == project["node_ids"]["t088"]
    assert first["repository"] == REPOSITORY and first["filePath"] == EXPECTED_PATH
    assert first["foundBy"] == ["dense"]
    assert found.structured["retrieval"]["model"] == DEFAULT_MODEL_NAME
    assert nothing.structured is not None and nothing.structured["records"] == []
    assert (unbuilt.is_error, unbuilt.text) == (True, FIND_SIMILAR_UNAVAILABLE_REFUSAL)
    assert capabilities.structured is not None
    assert capabilities.structured["capabilities"]["reviewSimilarity"] is True
    assert "review.findSimilar" in capabilities.structured["tools"]


def test_the_cli_answers_the_same_as_the_tool(module_installation: Installation, module_daemon: RunningDaemon,
                                              project: dict[str, Any]) -> None:
    root: Path = project["root"]
    as_json = module_installation.cli("review", "similar", PARAPHRASE, "--json", "--project", str(root), check=True)
    [tool] = call_tools(module_daemon.mcp_url, [("review.findSimilar", {"projectId": "labelled",
                                                                        "situation": PARAPHRASE})])
    assert json.loads(as_json.stdout)["summary"] == tool.structured
    table = module_installation.cli("review", "similar", PARAPHRASE, "--project", str(root), check=True)
    lines = table.stdout.strip().splitlines()
    assert lines[0].split() == ["sim", "fused", "found", "by", "kind", "repository", "pr", "state", "file", "excerpt"]
    assert REPOSITORY in lines[1] and EXPECTED_PATH in lines[1]
    store = tool.structured["retrieval"]["storeBuildId"]
    assert lines[-1].startswith(f"5 records; model wordllama-l2-supercat-256; store {store}; ")
    assert lines[-1].endswith(UNTRUSTED_NOTE)
    as_csv = module_installation.cli("review", "similar", PARAPHRASE, "--csv", "--project", str(root), check=True)
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert [row["recordPath"] for row in rows] == [record["recordPath"] for record in tool.structured["records"]]
    assert rows[0]["similarity"] == str(tool.structured["records"][0]["similarity"])  # whole, not rounded


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_real_client_sending_a_situation_with_no_word_is_refused_not_answered(
        module_daemon: RunningDaemon, project: dict[str, Any], mode: Mode) -> None:
    answers = call_tools(module_daemon.mcp_url, [
        *[("review.findSimilar", {"projectId": "labelled", "situation": s}) for s in WORDLESS],
        ("review.findSimilar", {"projectId": "labelled", "situation": "... the stack trace?!"}),
    ], mode)
    assert [(a.is_error, a.text) for a in answers[:-1]] == [(True, SITUATION_WITHOUT_WORDS_REFUSAL)] * len(WORDLESS)
    assert answers[-1].is_error is False  # one content word among the punctuation is a situation


def test_the_cli_refuses_a_situation_with_no_word_with_the_tools_words_exit_1(
        module_installation: Installation, project: dict[str, Any]) -> None:
    printed = module_installation.cli("review", "similar", "...", "--project", str(project["root"]))
    assert (printed.returncode, printed.stdout) == (1, "")
    assert printed.stderr.splitlines() == [f"theurian: {SITUATION_WITHOUT_WORDS_REFUSAL}"]


def test_the_cli_refuses_a_filter_combination_that_can_never_match_with_the_tools_words_exit_1(
        module_installation: Installation, module_daemon: RunningDaemon, project: dict[str, Any]) -> None:
    [tool] = call_tools(module_daemon.mcp_url, [("review.findSimilar", {
        "projectId": "labelled", "situation": PARAPHRASE, "threadState": "open", "kind": "review-submission"})])
    assert tool.is_error and "can never match" in tool.text
    printed = module_installation.cli("review", "similar", PARAPHRASE, "--thread-state", "open",
                                      "--kind", "review-submission", "--project", str(project["root"]))
    assert (printed.returncode, printed.stdout, printed.stderr.splitlines()) == (1, "", [f"theurian: {tool.text}"])


def test_the_cli_says_so_when_nothing_came_near(module_installation: Installation, project: dict[str, Any]) -> None:
    result = module_installation.cli("review", "similar", "which printer driver the office laptops should install",
                                     "--project", str(project["root"]), check=True)
    assert result.stdout.startswith("nothing like this came up in review")


def test_the_cli_says_so_when_the_filters_matched_no_record(module_installation: Installation,
                                                             project: dict[str, Any]) -> None:
    result = module_installation.cli("review", "similar", PARAPHRASE, "--repository", "no-such/repository",
                                     "--project", str(project["root"]), check=True)
    assert result.stdout.startswith("no record matched the filters, so nothing was compared")


def test_the_cli_refuses_a_bad_limit_and_an_overlong_situation_with_the_tools_words_exit_1(
        module_installation: Installation, module_daemon: RunningDaemon, project: dict[str, Any]) -> None:
    over_limit = {"situation": "x", "limit": 21}
    over_long = {"situation": "x" * 2001}
    tool_over, tool_long = call_tools(module_daemon.mcp_url, [
        ("review.findSimilar", {"projectId": "labelled", **over_limit}),
        ("review.findSimilar", {"projectId": "labelled", **over_long})])
    assert tool_over.is_error and tool_long.is_error
    at = module_installation.cli("review", "similar", "x", "--limit", "20", "--project", str(project["root"]))
    assert at.returncode == 0, at.stderr
    over = module_installation.cli("review", "similar", "x", "--limit", "21", "--project", str(project["root"]))
    assert (over.returncode, over.stderr.splitlines()) == (1, [f"theurian: {tool_over.text}"])
    assert tool_over.text == ("review.findSimilar: `limit` must be between 1 and 20; the default is 5. Nothing was "
                              "clamped; send a limit in that range.")
    long = module_installation.cli("review", "similar", "x" * 2001, "--project", str(project["root"]))
    assert (long.returncode, long.stderr.splitlines()) == (1, [f"theurian: {tool_long.text}"])


def test_the_cli_refuses_a_folder_no_registration_names_even_with_a_built_store(
        module_installation: Installation, project: dict[str, Any], tmp_path: Path) -> None:
    copied = copy_project(project["root"], tmp_path / "copied")
    printed = module_installation.cli("review", "similar", PARAPHRASE, "--json", "--project", str(copied))
    refusal = (f"{copied} is not registered, so no agent can read it: run `theurian project register {copied}` "
               "first")
    assert printed.returncode == 1
    assert json.loads(printed.stdout)["ok"] is False and json.loads(printed.stdout)["summary"]["error"] == refusal


def test_the_cli_answers_a_damaged_store_with_the_tools_refusal(
        module_installation: Installation, module_daemon: RunningDaemon, project: dict[str, Any],
        tmp_path: Path) -> None:
    damaged = registered_with_a_damaged_store(module_installation, project["root"], tmp_path / "damaged", "damaged")
    [tool] = call_tools(module_daemon.mcp_url, [("review.findSimilar", {"projectId": "damaged",
                                                                        "situation": PARAPHRASE})])
    assert (tool.is_error, tool.text) == (True, FIND_SIMILAR_UNAVAILABLE_REFUSAL)
    printed = module_installation.cli("review", "similar", PARAPHRASE, "--project", str(damaged))
    # The tool's words, its cure carrying the project the command was given (`theurian.cli.pasteable`).
    refusal = FIND_SIMILAR_UNAVAILABLE_REFUSAL.replace("`theurian review build`",
                                                       f"`theurian review build --project {damaged}`")
    assert (printed.returncode, printed.stderr.splitlines()) == (1, [f"theurian: {refusal}"])
