"""The MCP Inspector CLI (installed by `make test` from scripts/inspector's lock) against a real daemon."""

import json

from serve.tools import registered_tools
from tests.support.daemon import RunningDaemon
from tests.support.inspector import INSPECTOR_TOOL_REFUSED_EXIT, first_json, inspect


def test_the_inspector_lists_exactly_the_registered_tools(module_daemon: RunningDaemon) -> None:
    result = inspect(module_daemon.mcp_url, "--method", "tools/list")
    assert result.returncode == 0, result.stderr
    names = sorted(tool["name"] for tool in first_json(result.stdout)["tools"])
    assert names == sorted(tool.name for tool in registered_tools())


def test_the_inspector_reads_capabilities_and_sees_a_refusal_as_a_tool_error(module_daemon: RunningDaemon) -> None:
    answered = inspect(module_daemon.mcp_url, "--method", "tools/call", "--tool-name", "system.capabilities")
    assert answered.returncode == 0, answered.stderr
    document = first_json(answered.stdout)
    assert json.loads(document["content"][0]["text"])["protocolVersion"] == "theurian/v1"

    refused = inspect(module_daemon.mcp_url, "--method", "tools/call", "--tool-name", "project.list",
                      "--tool-arg", "x=1")
    assert refused.returncode == INSPECTOR_TOOL_REFUSED_EXIT
    assert "unknown key `x` is not accepted" in refused.stdout


def test_the_inspector_finds_every_tool_schema_portable_on_both_routes(module_daemon: RunningDaemon) -> None:
    # --strict reports each schema-portability finding (a `type` array, a remote `$ref`, a schema that
    # constrains nothing, a bare boolean schema); with --format json they arrive as `schemaFindings`.
    for url in (module_daemon.mcp_url, module_daemon.compat_url):
        result = inspect(url, "--method", "tools/list", "--strict", "--format", "json")
        assert result.returncode == 0, result.stderr
        envelope = first_json(result.stdout)
        assert len(envelope["result"]["tools"]) == len(registered_tools())
        assert envelope.get("schemaFindings", []) == [], url
