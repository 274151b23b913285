"""The MCP Inspector CLI (installed by `make test` from scripts/inspector's lock) against a real daemon."""

import json
import subprocess

from serve.tools import registered_tools
from tests.support.daemon import RunningDaemon
from tests.support.inspector import INSPECTOR_TOOL_REFUSED_EXIT, inspect


def _inspect(daemon: RunningDaemon, *args: str) -> subprocess.CompletedProcess[str]:
    return inspect(daemon.mcp_url, *args)


def _first_json(text: str) -> dict:
    return json.JSONDecoder().raw_decode(text.lstrip())[0]


def test_the_inspector_lists_exactly_the_registered_tools(module_daemon: RunningDaemon) -> None:
    result = _inspect(module_daemon, "--method", "tools/list")
    assert result.returncode == 0, result.stderr
    names = sorted(tool["name"] for tool in _first_json(result.stdout)["tools"])
    assert names == sorted(tool.name for tool in registered_tools())


def test_the_inspector_reads_capabilities_and_sees_a_refusal_as_a_tool_error(module_daemon: RunningDaemon) -> None:
    answered = _inspect(module_daemon, "--method", "tools/call", "--tool-name", "system.capabilities")
    assert answered.returncode == 0, answered.stderr
    document = _first_json(answered.stdout)
    assert json.loads(document["content"][0]["text"])["protocolVersion"] == "theurian/v1"

    refused = _inspect(module_daemon, "--method", "tools/call", "--tool-name", "project.list", "--tool-arg", "x=1")
    assert refused.returncode == INSPECTOR_TOOL_REFUSED_EXIT
    assert "unknown key `x` is not accepted" in refused.stdout
