"""Hybrid knowledge.search end to end: migrations authored as files, `theurian migrate apply` and `theurian index
build [--raptor]` by the real CLI, a real daemon, and the SDK's client in both protocol eras."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.knowledge.authoring import REPO, MigrationWriter
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, ToolAnswer, call_tools
from theurian.embedding import DEFAULT_MODEL_NAME

PARAPHRASE = "my worker and the sync job are both stuck waiting on each other"
WORDS = ["lexical", "title", "trigram"]


def _project(installation: Installation, root: Path, project_id: str, *build: str) -> Path:
    writer = MigrationWriter(root, created_at="2026-08-01T00:00:00Z")
    for item in json.loads((REPO / "fixtures/knowledge-retrieval/items.json").read_text(encoding="utf-8")):
        writer.item(item["itemId"], item["body"], title=item["title"], kind=item["kind"])
    writer.write("labelled-set")
    installation.cli_in_process("project", "register", str(root), "--id", project_id)
    installation.cli_in_process("migrate", "apply", "--project", str(root))
    out = installation.cli("index", "build", "--project", str(root), *build, check=True).stdout
    assert f"embedding model: {DEFAULT_MODEL_NAME}" in out
    return root


@pytest.fixture(scope="module")
def projects(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("hybrid-e2e")
    return (_project(module_installation, base / "plain", "plain"),
            _project(module_installation, base / "raptor", "raptor", "--raptor"))


def _valid(name: str, answer: ToolAnswer) -> dict[str, Any]:
    return answer.valid(name.replace(".", "-") + "-response.schema.json")


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_an_agent_gets_a_hybrid_answer_and_raptor_paths_from_indexes_the_cli_built(
        module_daemon: RunningDaemon, projects: tuple[Path, Path], mode: Mode) -> None:
    answers = call_tools(module_daemon.mcp_url, [
        ("knowledge.search", {"projectId": "plain", "query": PARAPHRASE}),
        ("knowledge.search", {"projectId": "raptor", "query": PARAPHRASE}),
        ("knowledge.search", {"projectId": "plain", "query": "jitte"}),
        ("system.capabilities", {}),
    ], mode)
    plain, raptor, part_word = (_valid("knowledge.search", a) for a in answers[:3])
    capabilities = _valid("system.capabilities", answers[3])
    assert plain["retrieval"]["channels"] == [*WORDS, "dense"]
    deadlock = [h for h in plain["results"][:2] if h["itemId"] == "incident.billing-ledger-deadlock"]
    assert deadlock and "dense" in deadlock[0]["foundBy"] and "raptorPath" not in deadlock[0]
    assert raptor["retrieval"]["channels"] == [*WORDS, "dense", "summary"]
    assert all([n["level"] for n in hit["raptorPath"]] == [3, 2, 1] for hit in raptor["results"])
    assert any("summary" in hit["foundBy"] for hit in raptor["results"])
    assert [(h["itemId"], h["foundBy"]) for h in part_word["results"]] == [
        ("convention.backoff-with-jitter", ["trigram"])]
    by_project = {p["projectId"]: p["channels"] for p in capabilities["knowledgeRetrieval"]["projects"]}
    assert by_project == {"plain": [*WORDS, "dense"], "raptor": [*WORDS, "dense", "summary"]}
