"""Knowledge end to end: migrations authored as files, the real CLI, a real daemon whose installation sets
`disclosure_ceiling = "public"`, and the SDK client in both protocol eras."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from serve.tools.knowledge import KNOWLEDGE_SEARCH_CAPACITY_REFUSAL, MAX_QUERY_CHARS, QUERY_NUL_REFUSAL
from tests.knowledge.authoring import MigrationWriter, copy_sample
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, ToolAnswer, call_tools, connected
from theurian.errors import TheurianError
from theurian.installation import INSTALLATION_CONFIG_NAME

LOCKED_SEARCHES = 4  # MAX_CONCURRENT_SEARCHES: these hold every permit while the state is locked


@pytest.fixture(scope="module")
def module_installation(tmp_path_factory: pytest.TempPathFactory) -> Installation:
    """This module's installation discloses public knowledge only (read once, when its daemon starts)."""
    installation = Installation(tmp_path_factory.mktemp("knowledge-installation"))
    config = installation.home / "config" / INSTALLATION_CONFIG_NAME
    config.parent.mkdir(parents=True)
    config.write_text('disclosure_ceiling = "public"\n', encoding="utf-8")
    return installation


@pytest.fixture(scope="module")
def project(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_sample(tmp_path_factory.mktemp("knowledge-e2e") / "sample")
    writer = MigrationWriter(root, created_at="2026-09-01T00:00:00+09:00")
    writer.item("decision.cache-policy", "Cache JWT verification results for one minute.", title="Cache policy",
                sensitivity="public", validFrom="2026-09-01T00:00:00+09:00")
    writer.write("cache")
    module_installation.cli_in_process("project", "register", str(root), "--id", "kb")
    module_installation.cli_in_process("migrate", "apply", "--project", str(root))
    module_installation.cli_in_process("index", "build", "--project", str(root))
    return root


def _valid(name: str, answer: ToolAnswer) -> dict[str, Any]:
    return answer.valid(name.replace(".", "-") + "-response.schema.json")


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_an_agent_searches_gets_and_counts_knowledge_through_a_real_client(
        module_daemon: RunningDaemon, project: Path, mode: Mode) -> None:
    answers = call_tools(module_daemon.mcp_url, [
        ("knowledge.search", {"projectId": "kb", "query": "JWT"}),
        ("knowledge.status", {"projectId": "kb"}),
        ("knowledge.get", {"projectId": "kb", "itemId": "decision.cache-policy"}),
        ("knowledge.get", {"projectId": "kb", "itemId": "architecture.auth-policy"}),
        ("knowledge.get", {"projectId": "kb", "itemId": "no.such-item"}),
        ("knowledge.search", {"projectId": "kb", "query": "JWT", "asOf": "2026-08-31T15:30:00Z"}),
        ("knowledge.search", {"projectId": "kb", "query": "JWT", "asOf": "2026-08-31T23:59:59+09:00"}),
        ("knowledge.search", {"projectId": "kb", "query": "JWT", "asOf": "2026-09-01T00:00:00+09:00"}),
        ("knowledge.search", {"projectId": "kb", "query": "JWT", "asOf": "last tuesday"}),
        ("system.capabilities", {}),
    ], mode)
    search, status = _valid("knowledge.search", answers[0]), _valid("knowledge.status", answers[1])
    # auth-policy (internal) and the runbook (confidential) match "JWT" but sit above the ceiling.
    assert [hit["itemId"] for hit in search["results"]] == ["decision.cache-policy"]
    assert search["retrieval"]["indexed"] is True and search["retrieval"]["snapshotId"] == status["stateHash"]
    assert status["itemsByStatus"] == {"approved": 2} and status["itemCount"] == 2
    assert status["appliedMigrations"] == 3 and status["projectId"] == "kb"
    cache = _valid("knowledge.get", answers[2])
    assert cache["body"] == "Cache JWT verification results for one minute." and cache["executable"] is False
    assert answers[3].is_error and answers[4].is_error
    withheld, absent = answers[3].text, answers[4].text
    assert withheld.replace("architecture.auth-policy", "X") == absent.replace("no.such-item", "X")
    # validFrom is 2026-09-01T00:00:00+09:00 = 2026-08-31T15:00:00Z: the instant decides, never the spelling.
    assert [_valid("knowledge.search", a)["count"] for a in answers[5:8]] == [1, 0, 1]
    assert answers[8].is_error and "RFC 3339" in answers[8].text and "2026-08-01T09:00:00+09:00" in answers[8].text
    capabilities = answers[9].structured or {}
    assert capabilities["capabilities"]["sensitivityEnforcement"] is True
    assert {"knowledge.search", "knowledge.get", "knowledge.status"} <= set(capabilities["tools"])


def test_a_query_over_two_thousand_characters_is_refused_at_the_wire(module_daemon: RunningDaemon,
                                                                     project: Path) -> None:
    refused, accepted, clamped = call_tools(module_daemon.mcp_url, [
        ("knowledge.search", {"projectId": "kb", "query": "j" * (MAX_QUERY_CHARS + 1)}),
        ("knowledge.search", {"projectId": "kb", "query": "j" * MAX_QUERY_CHARS}),
        ("knowledge.search", {"projectId": "kb", "query": "JWT", "limit": 10**6, "maxTokens": -1}),
    ])
    assert refused.is_error and f"`query` violates maxLength {MAX_QUERY_CHARS}" in refused.text
    assert "jjj" not in refused.text
    assert _valid("knowledge.search", accepted)["count"] == 0
    assert (_valid("knowledge.search", clamped)["limit"], clamped.structured["maxTokens"]) == (50, 100)  # type: ignore[index]


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_query_holding_a_nul_is_refused_as_review_search_refuses_one_not_searched(
        module_daemon: RunningDaemon, project: Path, mode: Mode) -> None:
    # Unrefused, "JWT\0zzz" was answered as a search for JWT (the hit below), and "\0" alone with no refusal.
    cut, alone, nul_q, plain = call_tools(module_daemon.mcp_url, [
        ("knowledge.search", {"projectId": "kb", "query": "JWT\u0000zzz"}),
        ("knowledge.search", {"projectId": "kb", "query": "\u0000"}),
        ("review.search", {"projectId": "kb", "q": "JWT\u0000zzz"}),
        ("knowledge.search", {"projectId": "kb", "query": "JWT"}),
    ], mode)
    assert (cut.is_error, cut.text) == (True, QUERY_NUL_REFUSAL)
    assert (alone.is_error, alone.text) == (True, QUERY_NUL_REFUSAL)
    assert "zzz" not in cut.text
    # review.search's words for its `q`, the same but for the tool and the key.
    assert nul_q.is_error and nul_q.text == QUERY_NUL_REFUSAL.replace("knowledge.search", "review.search").replace(
        "`query`", "`q`")
    assert _valid("knowledge.search", plain)["count"] == 1


def test_knowledge_search_at_the_command_line_refuses_a_nul_with_the_tools_words(
        module_installation: Installation, project: Path) -> None:
    # In process: no console script can be handed a NUL (an argv string ends at one), so this is the CLI's own
    # path to the tool (`answer_as_agent`) and the error main.run would print as its one line.
    with pytest.raises(AssertionError) as refused:
        module_installation.cli_in_process("knowledge", "search", "JWT\x00zzz", "--project", str(project))
    cause = refused.value.__cause__
    assert isinstance(cause, TheurianError) and (cause.message, cause.exit_code) == (QUERY_NUL_REFUSAL, 1)


def test_an_unregistered_project_is_refused_with_its_code(module_daemon: RunningDaemon) -> None:
    (answer,) = call_tools(module_daemon.mcp_url, [("knowledge.status", {"projectId": "nowhere"})])
    assert answer.is_error and json.loads(answer.text)["error"]["code"] == "PROJECT_NOT_REGISTERED"


def test_the_fifth_concurrent_search_is_refused_with_the_capacity_constant(module_daemon: RunningDaemon,
                                                                           project: Path) -> None:
    pointer = json.loads((project / ".theurian/state/knowledge-active.json").read_text(encoding="utf-8"))
    lock = sqlite3.connect(project / ".theurian/state" / pointer["stateFile"], isolation_level=None)

    async def scenario() -> list[ToolAnswer]:
        async with connected(module_daemon.mcp_url) as client:
            async def one() -> ToolAnswer:
                result = await client.call_tool("knowledge.search", {"projectId": "kb", "query": "cache"})
                return ToolAnswer(bool(result.is_error), "".join(getattr(b, "text", "") for b in result.content),
                                  result.structured_content)

            lock.execute("BEGIN EXCLUSIVE")  # every search now waits inside the state read, holding its permit
            try:
                tasks = [asyncio.create_task(one()) for _ in range(LOCKED_SEARCHES + 1)]
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            finally:
                lock.execute("ROLLBACK")
            await asyncio.gather(*tasks)
            assert len(done) == 1
            return [task.result() for task in done] + [t.result() for t in tasks if t not in done]

    try:
        first, *rest = asyncio.run(scenario())
    finally:
        lock.close()
    assert first.is_error and first.text == KNOWLEDGE_SEARCH_CAPACITY_REFUSAL
    assert [a.is_error for a in rest] == [False] * LOCKED_SEARCHES
    assert all(a.structured and a.structured["count"] == 1 for a in rest)
