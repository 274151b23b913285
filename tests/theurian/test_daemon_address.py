"""The daemon's address facts have one owner: the defaults are the contract's 127.0.0.1:7419/mcp, the serving
code, the CLI and the client lines all read them from it, and a URL names an IPv6 host in brackets, once."""

from __future__ import annotations

from serve import daemon, server
from theurian import daemon_address
from theurian.cli import serve_command
from theurian.client_lines import client_url
from theurian.daemon_address import COMPAT_PATH, DEFAULT_HOST, DEFAULT_PORT, HEALTH_PATH, MCP_PATH, url
from theurian.daemon_state import DaemonRecord


def test_the_defaults_are_the_contracts_address_and_routes() -> None:
    assert url(DEFAULT_HOST, DEFAULT_PORT, MCP_PATH) == "http://127.0.0.1:7419/mcp"
    assert (COMPAT_PATH, HEALTH_PATH) == ("/mcp/compat", "/health")


def test_the_daemon_the_cli_and_the_client_lines_use_the_one_owners_facts() -> None:
    assert serve_command.DEFAULT_HOST is daemon_address.DEFAULT_HOST is daemon.DEFAULT_HOST
    assert serve_command.DEFAULT_PORT is daemon_address.DEFAULT_PORT is daemon.DEFAULT_PORT
    assert server.MCP_PATH is MCP_PATH and server.COMPAT_PATH is COMPAT_PATH
    assert client_url("claude-code", 7777) == "http://127.0.0.1:7777/mcp"


def test_an_ipv6_host_is_bracketed_once_wherever_a_url_is_built() -> None:
    assert url("::1", 7419, MCP_PATH) == url("[::1]", 7419, MCP_PATH) == "http://[::1]:7419/mcp"
    record = DaemonRecord(pid=1, host="::1", port=7419, startedAt="2026-01-01T00:00:00+00:00", version="0")
    assert (record.base_url, record.mcp_url) == ("http://[::1]:7419", "http://[::1]:7419/mcp")
    assert client_url("vscode", 7419, "[::1]") == client_url("vscode", 7419, "::1") == "http://[::1]:7419/mcp/compat"
