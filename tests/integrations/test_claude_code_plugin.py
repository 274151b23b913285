"""The Claude Code plugin folder (integrations/claude-code) against the plugin format Claude Code documents, and
its parts against a real daemon: the MCP entry's header gets answers, the session-start hook tells a stopped
daemon from a running one, and every CLI command the slash commands run exists."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.support import cli_app
from tests.support.daemon import RunningDaemon, managed_start, running_daemon
from tests.support.installation import THEURIAN_BIN, Installation
from tests.support.mcp_client import call_tool, connected
from theurian import __version__
from theurian.access_token import TOKEN_ENV

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "integrations" / "claude-code"
PORT_ENV = "THEURIAN_PORT"  # the port the plugin's MCP entry connects to (.mcp.json)
SCHEMA = json.loads((Path(__file__).with_name("claude_code_plugin.schema.json")).read_text(encoding="utf-8"))


def _check(definition: str, document: Any) -> None:
    jsonschema.Draft202012Validator({**SCHEMA, "$ref": f"#/$defs/{definition}"}).validate(document)


def _json(relative: str) -> Any:
    return json.loads((PLUGIN / relative).read_text(encoding="utf-8"))


def _front_matter(path: Path) -> tuple[dict[str, Any], str]:
    text = path.read_text(encoding="utf-8")
    match = re.fullmatch(r"---\n(.*?)\n---\n(.*)", text, re.DOTALL)
    assert match, f"{path.name} has no YAML front matter"
    return yaml.safe_load(match.group(1)), match.group(2)


def test_the_manifest_follows_the_documented_format_and_carries_the_package_version() -> None:
    manifest = _json(".claude-plugin/plugin.json")
    _check("manifest", manifest)
    assert manifest["name"] == "theurian" and manifest["version"] == __version__


def test_the_schema_refuses_what_claude_code_would_not_load() -> None:
    """The check can fail: a name Claude Code rejects, a path without ./, a hook of an unknown event."""
    for bad in ({"name": "Theurian"}, {"name": "theurian", "commands": "commands/"}, {"name": "x", "colour": 1}):
        with pytest.raises(jsonschema.ValidationError):
            _check("manifest", bad)
    with pytest.raises(jsonschema.ValidationError):
        _check("hooksFile", {"hooks": {"OnBoot": [{"hooks": [{"type": "command", "command": "x"}]}]}})


def test_the_mcp_entry_hooks_and_commands_follow_the_documented_formats() -> None:
    _check("mcpFile", _json(".mcp.json"))
    _check("hooksFile", _json("hooks/hooks.json"))
    commands = sorted(PLUGIN.glob("commands/*.md"))
    assert [c.stem for c in commands] == ["ingest", "search", "status"]
    for command in commands:
        front, body = _front_matter(command)
        _check("commandFrontMatter", front)
        assert body.strip()


def _command_paths() -> set[tuple[str, ...]]:
    paths: set[tuple[str, ...]] = set()

    def walk(command: Any, prefix: tuple[str, ...]) -> None:
        paths.add(prefix)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*prefix, name))

    walk(cli_app.command(), ())
    return paths


def test_every_cli_command_the_slash_commands_and_hook_run_exists() -> None:
    files = [*PLUGIN.glob("commands/*.md"), PLUGIN / "hooks/session-start.sh"]
    # A command as the files run it: quoted in backticks, allowed as Bash(...), or tested by the hook's `if`.
    named = {tuple(m.split()) for path in files
             for m in re.findall(r"(?:`|Bash\(|if )theurian((?: [a-z]+){1,2})", path.read_text(encoding="utf-8"))}
    assert len(named) >= 8, named
    assert named <= _command_paths(), named - _command_paths()


def test_the_mcp_entry_with_the_token_from_the_environment_is_answered_by_the_daemon(
        module_daemon: RunningDaemon) -> None:
    entry = _json(".mcp.json")["mcpServers"]["theurian"]
    assert _expanded(entry["url"], {}) == "http://127.0.0.1:7419/mcp"  # the default address, THEURIAN_PORT unset
    # Expanded as Claude Code expands ${VAR} and ${VAR:-default} in a URL and a header, with the variables the docs
    # tell the user to export (the test's daemon has a port of its own).
    environment = {TOKEN_ENV: module_daemon.token, PORT_ENV: str(module_daemon.port)}
    url = _expanded(entry["url"], environment)
    header = _expanded(entry["headers"]["Authorization"], environment)
    assert url == module_daemon.mcp_url and header == f"Bearer {module_daemon.token}"

    async def listed() -> int:
        async with connected(url, token=header.removeprefix("Bearer ")) as client:
            return len((await client.list_tools()).tools)

    assert asyncio.run(listed()) > 0


def _expanded(text: str, environment: dict[str, str]) -> str:
    """`text` with `${VAR}` and `${VAR:-default}` expanded as Claude Code expands them in .mcp.json."""
    return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}",
                  lambda m: environment.get(m.group(1), m.group(2) if m.group(2) is not None else m.group(0)), text)


def _hook(installation: Installation, **extra: str) -> subprocess.CompletedProcess[str]:
    command = _json("hooks/hooks.json")["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    env = installation.env | {"CLAUDE_PLUGIN_ROOT": str(PLUGIN), "PATH": f"{THEURIAN_BIN.parent}:/usr/bin:/bin"}
    env.pop(TOKEN_ENV, None)
    env.pop(PORT_ENV, None)
    return subprocess.run(["bash", "-c", command], env=env | extra, capture_output=True, text=True, timeout=60)


def test_the_session_start_hook_says_what_to_do_when_the_daemon_is_down(installation: Installation) -> None:
    result = _hook(installation)
    assert result.returncode == 0
    assert "the daemon is not running" in result.stdout and "`theurian daemon start`" in result.stdout
    assert "THEURIAN_MCP_TOKEN is not set" in result.stdout


def test_the_session_start_hook_reports_a_running_daemon(module_installation: Installation,
                                                         module_daemon: RunningDaemon) -> None:
    result = _hook(module_installation, **{TOKEN_ENV: module_daemon.token, PORT_ENV: str(module_daemon.port)})
    assert result.returncode == 0
    assert result.stdout.strip() == ("Theurian: the daemon is running; its MCP tools (system.capabilities first) "
                                     "answer for registered projects.")


def test_the_session_start_hook_names_the_port_when_the_daemon_runs_on_another(
        module_installation: Installation, module_daemon: RunningDaemon) -> None:
    """`theurian setup --port N` or `daemon start --port N` moves the daemon; the plugin's entry still connects to
    THEURIAN_PORT (7419 unset): the hook says so and how to point the entry at it, not that all is well."""
    result = _hook(module_installation, **{TOKEN_ENV: module_daemon.token})  # THEURIAN_PORT unset: 7419
    assert result.returncode == 0
    assert result.stdout.strip() == (
        f"Theurian: the daemon is running at {module_daemon.mcp_url}, but this plugin connects to "
        "http://127.0.0.1:7419/mcp, so its MCP tools will fail. Ask the user to run "
        f"`export {PORT_ENV}={module_daemon.port}` before starting Claude Code.")


def test_the_session_start_hook_reports_a_daemon_on_localhost_as_running_where_the_plugin_connects(
        installation: Installation) -> None:
    """`--host localhost` binds an IPv4 socket, so 127.0.0.1 (where the entry connects) reaches it: the port set,
    the hook says all is well rather than asking for the THEURIAN_PORT already set."""
    with running_daemon(installation, options=("--host", "localhost")) as daemon:
        result = _hook(installation, **{TOKEN_ENV: daemon.token, PORT_ENV: str(daemon.port)})
        assert not call_tool(daemon.mcp_url, "system.capabilities", {}).is_error  # 127.0.0.1 does reach it
    assert result.stdout.strip() == ("Theurian: the daemon is running; its MCP tools (system.capabilities first) "
                                     "answer for registered projects.")


@pytest.fixture
def on_ipv6_loopback(installation: Installation) -> Iterator[int]:
    """A daemon started by `theurian daemon start --host ::1` (IPv6 only, which 127.0.0.1 does not reach)."""
    started, port = managed_start(installation, "--host", "::1")
    assert started.returncode == 0, started.stderr
    try:
        yield port
    finally:
        installation.cli("daemon", "stop", timeout=60)


def test_the_session_start_hook_names_a_host_mismatch_as_such_when_the_port_matches(
        installation: Installation, on_ipv6_loopback: int) -> None:
    port = on_ipv6_loopback
    result = _hook(installation, **{TOKEN_ENV: installation.token(), PORT_ENV: str(port)})
    assert result.returncode == 0
    assert result.stdout.strip() == (
        f"Theurian: the daemon is running at http://[::1]:{port}/mcp, on host ::1, but this plugin connects to "
        f"host 127.0.0.1 (http://127.0.0.1:{port}/mcp), so its MCP tools will fail. Ask the user to restart the "
        f"daemon on 127.0.0.1: `theurian daemon stop`, then `theurian daemon start --port {port}`.")


def test_the_session_start_hook_names_both_when_host_and_port_differ(
        installation: Installation, on_ipv6_loopback: int) -> None:
    port = on_ipv6_loopback
    result = _hook(installation, **{TOKEN_ENV: installation.token()})  # THEURIAN_PORT unset: 7419
    assert result.stdout.strip() == (
        f"Theurian: the daemon is running at http://[::1]:{port}/mcp, on host ::1, but this plugin connects to "
        "host 127.0.0.1 (http://127.0.0.1:7419/mcp), so its MCP tools will fail. Ask the user to restart the "
        f"daemon on 127.0.0.1: `theurian daemon stop`, then `theurian daemon start --port {port}`. The port "
        f"differs too: ask the user to run `export {PORT_ENV}={port}` before starting Claude Code.")
