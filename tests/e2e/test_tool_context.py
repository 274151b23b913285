"""snapshotId, agentId and taskId are admitted by every project-scoped schema and read by nothing: a call that
sets them is answered exactly as if it had not."""

from collections.abc import Iterator

import httpx
import pytest

import schemas
from serve.tooling import ToolKind
from serve.tools import registered_tools
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_session import McpSession
from tests.support.raw_http import modern_call
from tests.support.sample_project import built_sample_project
from tests.support.schema_values import minimal_arguments

READ_TOOLS = [t for t in registered_tools()
              if "$ref" in schemas.load("mcp", t.input_schema) and t.kind is ToolKind.READ]
# Arguments that reach real answers in the sample project (the minimal ones would ask for an item "a").
SERVED = {"knowledge.get": {"itemId": "testing.flaky-retries"}, "knowledge.search": {"query": "retry"},
          "review.search": {"q": "lock"}, "review.findSimilar": {"situation": "a lock held across a network call"}}
CONTEXT = {"snapshotId": "01K00000000000000000000000", "agentId": "agent-7", "taskId": "task-42"}


@pytest.fixture(scope="module")
def session(module_installation: Installation, module_daemon: RunningDaemon,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpSession]:
    built_sample_project(module_installation, tmp_path_factory.mktemp("context") / "sample")
    with McpSession(module_daemon.mcp_url) as live:
        yield live


def test_this_build_has_project_scoped_read_tools() -> None:
    assert len(READ_TOOLS) >= 4


@pytest.mark.parametrize("tool", READ_TOOLS, ids=lambda t: t.name)
def test_the_three_context_fields_change_nothing_in_an_answer(session: McpSession, tool) -> None:
    arguments = minimal_arguments(tool.input_schema, "sample") | SERVED.get(tool.name, {})
    plain = session.call(tool.name, arguments)
    with_context = session.call(tool.name, arguments | CONTEXT)
    assert not plain.is_error, plain.content
    assert with_context.model_dump() == plain.model_dump()


@pytest.mark.parametrize("tool", ["review.search", "review.findings", "knowledge.search", "review.findSimilar"])
def test_a_lone_surrogate_in_project_id_is_refused_by_the_input_check_and_never_echoed(
        module_daemon: RunningDaemon, tool: str) -> None:
    """A raw 2026-era POST (its JSON parser lets a lone surrogate through; an SDK client cannot even encode one):
    the tools that answer one in their filters let `projectId` reach the registry, whose PROJECT_NOT_REGISTERED
    refusal echoed it (not Unicode text)."""
    extra = {"knowledge.search": {"query": "q"}, "review.findSimilar": {"situation": "s"}}.get(tool, {})
    headers, body = modern_call(tool, {"projectId": "my-service\ud800", **extra})
    assert b"\\ud800" in body  # the JSON escape, as a raw client would send it
    response = httpx.post(module_daemon.mcp_url, content=body,
                          headers=headers | {"Authorization": f"Bearer {module_daemon.token}"}, timeout=30)
    result = response.json()["result"]
    assert result["isError"] is True and "ud800" not in response.text and "my-service" not in response.text
    assert result["content"][0]["text"] == (
        f"Invalid arguments for {tool}: `projectId` is not Unicode text (it holds a lone surrogate).")
