"""snapshotId, agentId and taskId are admitted by every project-scoped schema and read by nothing: a call that
sets them is answered exactly as if it had not."""

from collections.abc import Iterator

import pytest

import schemas
from serve.tooling import ToolKind
from serve.tools import registered_tools
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_session import McpSession
from tests.support.sample_project import built_sample_project
from tests.support.schema_values import minimal_arguments

READ_TOOLS = [t for t in registered_tools()
              if "$ref" in schemas.load("mcp", t.input_schema) and t.kind is ToolKind.READ]
# Arguments that reach real answers in the sample project (the minimal ones would ask for an item "a").
SERVED = {"knowledge.get": {"itemId": "testing.flaky-retries"}, "knowledge.search": {"query": "retry"},
          "review.search": {"q": "lock"}}
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


