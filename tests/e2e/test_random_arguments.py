"""Property: whatever JSON object a caller sends to any tool, the answer is a schema-valid result or a refusal,
never a protocol error or a crash."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import schemas
from serve.refusal import INTERNAL_FAULT_REFUSAL
from serve.tools import registered_tools
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_session import McpSession
from tests.support.sample_project import built_sample_project

REPO = Path(__file__).resolve().parents[2]
TOOLS = registered_tools()

json_scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=50)
                | st.integers(min_value=-5, max_value=10**6).map(float))  # 20.0 is an integer to JSON Schema
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=12)


def _arguments_for(schema_name: str) -> st.SearchStrategy[dict[str, Any]]:
    schema = schemas.load("mcp", schema_name)
    keys = sorted(schema["properties"]) + (["projectId", "snapshotId"] if "$ref" in schema else [])
    key = st.sampled_from(keys) | st.text(max_size=12) if keys else st.text(max_size=12)
    value = (json_values | st.just("sample") | st.integers(min_value=-3, max_value=120)
             | st.sampled_from([20.0, 1e3, 1e30]))
    return st.dictionaries(key, value, max_size=6)


@pytest.fixture(scope="module")
def session(module_installation: Installation, module_daemon: RunningDaemon,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpSession]:
    built_sample_project(module_installation, tmp_path_factory.mktemp("random") / "sample")
    with McpSession(module_daemon.mcp_url) as live:
        yield live


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_random_arguments_get_a_valid_result_or_a_refusal(session: McpSession, tool: Any) -> None:
    output = jsonschema.Draft202012Validator(schemas.load("mcp", tool.output_schema))

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_arguments_for(tool.input_schema))
    def check(arguments: dict[str, Any]) -> None:
        result = session.call(tool.name, arguments)
        texts = [block.text for block in result.content if block.type == "text"]
        if result.is_error:
            assert result.structured_content is None and len(texts) == 1 and texts[0]
            assert "Traceback" not in texts[0]
            assert texts[0] != INTERNAL_FAULT_REFUSAL, arguments  # a refusal, never a crash behind one
        else:
            assert result.structured_content is not None
            output.validate(result.structured_content)

    check()
