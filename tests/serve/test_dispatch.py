"""The dispatcher: project resolution before any handler runs, and every failure turned into a refusal."""

import asyncio
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from serve.dispatch import Dispatcher
from serve.errors import ToolRefusal
from serve.refusal import INTERNAL_FAULT_REFUSAL
from serve.tooling import Call, ServeSettings, Tool
from serve.validation import Admitted, InputValidator
from tests.serve.test_schemas import CONTRACT_TOOLS, NO_PROJECT
from tests.support.installation import Installation
from theurian.errors import PathEscapeError
from theurian.places import (
    FINDINGS_STORE_ESCAPE_CURE,
    INDEX_ESCAPE_CURE,
    KNOWLEDGE_STATE_ESCAPE_CURE,
    PATH_ESCAPE_REFUSAL,
    REVIEW_SOURCE_ESCAPE_CURE,
    REVIEW_STORE_ESCAPE_CURE,
    STATE_ESCAPE_CURE,
    THEURIAN_DIR_ESCAPE_CURE,
    UNPLACED_ESCAPE_CURE,
    linked_inside_source_cure,
    source_escape_cure,
)

SETTINGS = ServeSettings("internal")


def _recording_tools(calls: list[str], seen: list[dict[str, Any]] | None = None) -> list[Tool]:
    def make(name: str) -> Tool:
        def handler(call: Call, **arguments: Any) -> Mapping[str, Any]:
            calls.append(name)
            if seen is not None:
                seen.append(arguments)
            return {"project": call.project.project_id if call.project else None}

        return Tool(name=name, description="", input_schema=CONTRACT_TOOLS[name], output_schema="",
                    handler=handler, project_scoped=name not in NO_PROJECT)

    return [make(name) for name in CONTRACT_TOOLS]


def _call(dispatcher: Dispatcher, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(dispatcher.call(name, arguments))


@pytest.mark.parametrize("tool", sorted(set(CONTRACT_TOOLS) - NO_PROJECT))
def test_a_state_dir_linked_outside_the_root_refuses_every_project_scoped_tool_before_it_runs(
    installation: Installation, tmp_path: Path, tool: str
) -> None:
    root = installation.new_project_in_process(tmp_path / "p")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / ".theurian/state").symlink_to(outside, target_is_directory=True)
    calls: list[str] = []
    result = _call(Dispatcher(_recording_tools(calls), SETTINGS), tool, {"projectId": "p"})
    assert result == {"content": [{"type": "text", "text": f"{PATH_ESCAPE_REFUSAL} {STATE_ESCAPE_CURE}"}],
                      "isError": True}
    assert calls == []
    assert str(outside) not in result["content"][0]["text"]


def test_a_project_resolves_and_the_handler_sees_it(installation: Installation, tmp_path: Path) -> None:
    installation.new_project_in_process(tmp_path / "p")
    calls: list[str] = []
    result = _call(Dispatcher(_recording_tools(calls), SETTINGS), "review.search", {"projectId": "p", "q": "x"})
    assert result["structuredContent"] == {"project": "p"} and result["isError"] is False
    assert calls == ["review.search"]


def test_an_unregistered_project_is_refused_with_its_code(installation: Installation) -> None:
    calls: list[str] = []
    result = _call(Dispatcher(_recording_tools(calls), SETTINGS), "knowledge.status", {"projectId": "ghost"})
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"]) == {"error": {
        "code": "PROJECT_NOT_REGISTERED",
        "message": "no project is registered under id 'ghost'; project.list names the registered projects",
        "details": {"projectId": "ghost"}}}
    assert calls == []


def test_an_unreadable_registration_is_refused_with_the_remedy(installation: Installation) -> None:
    from theurian.installation import registry_path

    registry_path().parent.mkdir(parents=True)
    registry_path().write_text("[projects.api]\n", encoding="utf-8")
    result = _call(Dispatcher(_recording_tools([]), SETTINGS), "knowledge.status", {"projectId": "api"})
    assert "registry entry names no absolute root path" in result["content"][0]["text"]
    assert "theurian project unregister api" in result["content"][0]["text"]


def test_a_handler_crash_becomes_a_refusal_without_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    def explode(call: Call) -> Mapping[str, Any]:
        raise RuntimeError("internal detail /secret/path")

    tool = Tool(name="system.capabilities", description="", input_schema=CONTRACT_TOOLS["system.capabilities"],
                output_schema="", handler=explode, project_scoped=False)
    result = _call(Dispatcher([tool], SETTINGS), "system.capabilities", {})
    assert result == {"content": [{"type": "text", "text": INTERNAL_FAULT_REFUSAL}], "isError": True}
    assert "RuntimeError" in caplog.text  # the operator's log has it; the caller does not


def test_a_tool_refusal_keeps_its_message() -> None:
    def refuse(call: Call) -> Mapping[str, Any]:
        raise ToolRefusal("no, because")

    tool = Tool(name="system.capabilities", description="", input_schema=CONTRACT_TOOLS["system.capabilities"],
                output_schema="", handler=refuse, project_scoped=False)
    assert _call(Dispatcher([tool], SETTINGS), "system.capabilities", {})["content"][0]["text"] == "no, because"


def test_integral_floats_reach_handlers_as_ints_and_other_values_untouched(
    installation: Installation, tmp_path: Path
) -> None:
    installation.new_project_in_process(tmp_path / "p")
    seen: list[dict[str, Any]] = []
    dispatcher = Dispatcher(_recording_tools([], seen), SETTINGS)
    verdict = InputValidator().admit("review.search", CONTRACT_TOOLS["review.search"],
                                     {"projectId": "p", "limit": 20.0, "pullRequest": 1e30, "q": "2.0"})
    assert isinstance(verdict, Admitted)  # the input path converts once; the dispatcher hands on what it admitted
    _call(dispatcher, "review.search", verdict.arguments)
    assert seen == [{"limit": 20, "pullRequest": 10**30 + 19884624838656, "q": "2.0"}]
    assert type(seen[0]["limit"]) is int


def test_the_shared_context_fields_never_reach_a_handler(installation: Installation, tmp_path: Path) -> None:
    installation.new_project_in_process(tmp_path / "p")
    seen: list[dict[str, Any]] = []
    dispatcher = Dispatcher(_recording_tools([], seen), SETTINGS)
    _call(dispatcher, "review.search", {"projectId": "p", "snapshotId": "s", "agentId": "a", "taskId": "t"})
    assert seen == [{}]


@pytest.mark.parametrize("relative, cure", [
    (".theurian/state", STATE_ESCAPE_CURE),
    (".theurian/state/review-store.duckdb", REVIEW_STORE_ESCAPE_CURE),
    (".theurian/state/theurian-findings-local.sqlite", FINDINGS_STORE_ESCAPE_CURE),
    (".theurian/state/knowledge-active.json", KNOWLEDGE_STATE_ESCAPE_CURE),
    (".theurian/state/knowledge-state-01K1A0000000000000000000S1.sqlite", KNOWLEDGE_STATE_ESCAPE_CURE),
    (".theurian/state/knowledge-index.json", INDEX_ESCAPE_CURE),
    (".theurian/state/knowledge-index-01K1A0000000000000000000X1.sqlite", INDEX_ESCAPE_CURE),
    (".theurian/state/knowledge-build.lock", STATE_ESCAPE_CURE),  # no derived store: the folder's cure
    (".theurian/state/nested/review-store.duckdb", STATE_ESCAPE_CURE),  # not the store's own place
    (".theurian/review", REVIEW_SOURCE_ESCAPE_CURE),
    (".theurian/review/sha256-ab/review-thread/PRRT_planted.json", REVIEW_SOURCE_ESCAPE_CURE),
    (".theurian", THEURIAN_DIR_ESCAPE_CURE),
    (".theurian/migrations", source_escape_cure(".theurian/migrations")),
    (".theurian/knowledge", source_escape_cure(".theurian/knowledge")),
    (".theurian/knowledge/planted.md", linked_inside_source_cure(".theurian/knowledge")),
    (".theurian/config.toml", source_escape_cure(".theurian/config.toml")),
    (".theurian/statefile-planted", UNPLACED_ESCAPE_CURE),  # a prefix of a known place is not that place
    ("knowledge/planted.md", UNPLACED_ESCAPE_CURE),  # relative to a proposal folder, not to the project
])
def test_an_escape_raised_inside_a_tool_gets_the_cure_for_what_escaped_and_never_names_the_path(
    relative: str, cure: str
) -> None:
    def escape(call: Call) -> Mapping[str, Any]:
        raise PathEscapeError("escaped", relative=relative)

    tool = Tool(name="system.capabilities", description="", input_schema=CONTRACT_TOOLS["system.capabilities"],
                output_schema="", handler=escape, project_scoped=False)
    text = _call(Dispatcher([tool], SETTINGS), "system.capabilities", {})["content"][0]["text"]
    assert text == f"{PATH_ESCAPE_REFUSAL} {cure}"
    assert "planted" not in text


def test_callers_of_one_tool_stuck_on_a_lock_never_hold_the_threads_another_tool_needs() -> None:
    """45 knowledge.status calls waiting on a locked store took every thread of anyio's shared pool (40), so
    system.capabilities waited behind them; each tool now has threads of its own."""
    release = threading.Event()

    def stuck(call: Call, **arguments: Any) -> Mapping[str, Any]:
        release.wait(60)  # the store's lock, held elsewhere
        return {}

    def quick(call: Call, **arguments: Any) -> Mapping[str, Any]:
        return {"answered": True}

    tools = [Tool(name="knowledge.status", description="", input_schema=CONTRACT_TOOLS["knowledge.status"],
                  output_schema="", handler=stuck, project_scoped=False),
             Tool(name="system.capabilities", description="", input_schema=CONTRACT_TOOLS["system.capabilities"],
                  output_schema="", handler=quick, project_scoped=False)]
    dispatcher = Dispatcher(tools, SETTINGS)

    async def scenario() -> dict[str, Any]:
        async with anyio.create_task_group() as group:
            for _ in range(45):
                group.start_soon(dispatcher.call, "knowledge.status", {})
            await anyio.wait_all_tasks_blocked()
            try:
                with anyio.fail_after(30):  # a bound on a hang, not a measured time: on the shared pool this waits
                    return await dispatcher.call("system.capabilities", {})
            finally:
                release.set()
        raise AssertionError("unreachable")

    result = anyio.run(scenario)
    assert result["structuredContent"] == {"answered": True}
