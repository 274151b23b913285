"""The client lines of docs/clients.md, run as written: each is the text `theurian setup --client` fills in, the
shell lines run through bash (the Inspector for real; `claude` as a stand-in that records what it was given), and
the JSON files' headers sent to a real daemon."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import httpx

from tests.support.daemon import MCP_HEADERS, RunningDaemon
from tests.support.inspector import INSPECTOR
from tests.support.installation import THEURIAN_BIN, Installation
from tests.support.mcp_client import call_tool, list_tools
from theurian.client_lines import INSPECTOR_PACKAGE, TOKEN_VARIABLE, VSCODE_INPUT_ID, client_config, client_url

REPO = Path(__file__).resolve().parents[2]
CLIENTS_MD = (REPO / "docs" / "clients.md").read_text(encoding="utf-8")
# The contract's address and routes, spelt here so that a change to their owner (theurian.daemon_address) fails.
DEFAULT_URL = "http://127.0.0.1:7419/mcp"
COMPAT_URL = "http://127.0.0.1:7419/mcp/compat"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "docs-line", "version": "0"}}}
SHELL_TOKEN = "$(theurian auth token)"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", CLIENTS_MD, re.DOTALL)


def _shell_line(start: str) -> str:
    return next(line for block in _blocks("sh") for line in block.splitlines() if line.startswith(start))


def _json_block(key: str) -> dict:
    return next(json.loads(block) for block in _blocks("json") if f'"{key}"' in block and "inputs" in block
                or f'"{key}"' in block and "mcp-remote" in block)


def test_each_documented_line_is_the_one_setup_client_fills_in() -> None:
    assert client_config("claude-code", DEFAULT_URL, SHELL_TOKEN) in CLIENTS_MD
    assert client_config("inspector", DEFAULT_URL, SHELL_TOKEN) in CLIENTS_MD
    assert client_config("vscode", client_url("vscode", 7419), "<token>") in CLIENTS_MD
    assert client_config("claude-desktop", client_url("claude-desktop", 7419), "<token>") in CLIENTS_MD
    assert client_config("cursor", client_url("cursor", 7419), "<token>") in CLIENTS_MD
    assert client_config("codex", client_url("codex", 7419), SHELL_TOKEN) in CLIENTS_MD
    assert client_config("gemini-cli", client_url("gemini-cli", 7419), SHELL_TOKEN) in CLIENTS_MD


def test_the_clients_that_refuse_dotted_names_are_pointed_at_the_compat_route() -> None:
    assert client_url("vscode", 7419) == client_url("claude-desktop", 7419) == COMPAT_URL
    assert client_url("cursor", 7419) == client_url("codex", 7419) == client_url("gemini-cli", 7419) == COMPAT_URL
    assert client_url("claude-code", 7419) == client_url("inspector", 7419) == DEFAULT_URL


def _cursor_block() -> dict:
    return next(json.loads(block) for block in _blocks("json") if '"mcpServers"' in block and "Bearer <token>" in block
                and "mcp-remote" not in block)


def _stand_in(bin_dir: Path, name: str) -> None:
    """A stand-in for a client's own command on PATH: prints each argument on a line, then the token variable."""
    command = bin_dir / name
    command.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\nprintf "%s\\n" "${TOKEN_VARIABLE}"\n',
                       encoding="utf-8")
    command.chmod(0o755)


def _bash(line: str, installation: Installation, daemon: RunningDaemon,
          bin_dir: Path) -> subprocess.CompletedProcess[str]:
    """The documented line, pointed at the test's daemon, run by bash with `theurian` on PATH."""
    pointed = line.replace(DEFAULT_URL, daemon.mcp_url).replace(f"npx {INSPECTOR_PACKAGE}", str(INSPECTOR))
    env = installation.env | {"PATH": f"{bin_dir}:{THEURIAN_BIN.parent}:/usr/local/bin:/usr/bin:/bin"}
    return subprocess.run(["bash", "-c", pointed], env=env, capture_output=True, text=True, timeout=120, cwd=REPO)


def test_the_documented_inspector_lines_run_against_the_daemon(module_installation: Installation,
                                                              module_daemon: RunningDaemon, tmp_path: Path) -> None:
    listed = _bash(client_config("inspector", DEFAULT_URL, SHELL_TOKEN), module_installation, module_daemon,
                   tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "system.capabilities" in listed.stdout
    called = _bash(_shell_line("npx @modelcontextprotocol/inspector@2.12.0 --cli http://127.0.0.1:7419/mcp --header "
                               '"Authorization: Bearer $(theurian auth token)" --method tools/call'),
                   module_installation, module_daemon, tmp_path)
    assert called.returncode == 0, called.stderr
    assert "theurian/v1" in called.stdout


def test_the_documented_claude_code_line_hands_claude_the_header_the_daemon_accepts(
        module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path) -> None:
    claude = tmp_path / "claude"  # a stand-in: records its arguments, one per line
    claude.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n', encoding="utf-8")
    claude.chmod(0o755)
    result = _bash(_shell_line("claude mcp add"), module_installation, module_daemon, tmp_path)
    assert result.returncode == 0, result.stderr
    arguments = result.stdout.splitlines()
    assert arguments[:5] == ["mcp", "add", "--transport", "http", "theurian"]
    assert arguments[5] == module_daemon.mcp_url and arguments[6] == "--header"
    name, value = arguments[7].split(": ", 1)
    assert name == "Authorization" and value == f"Bearer {module_daemon.token}"
    response = httpx.post(module_daemon.mcp_url, json=INITIALIZE, headers=MCP_HEADERS | {name: value}, timeout=10)
    assert response.status_code == 200


def test_the_documented_vscode_file_sends_the_prompted_token_the_daemon_accepts(module_daemon: RunningDaemon) -> None:
    document = _json_block("servers")
    assert [i["id"] for i in document["inputs"]] == [VSCODE_INPUT_ID] and document["inputs"][0]["password"] is True
    server = document["servers"]["theurian"]
    assert server["type"] == "http" and server["url"] == COMPAT_URL
    # VS Code replaces ${input:<id>} with what the user typed at its prompt: the token.
    header = server["headers"]["Authorization"].replace(f"${{input:{VSCODE_INPUT_ID}}}", module_daemon.token)
    answer = call_tool(module_daemon.compat_url, "system_capabilities", {}, token=header.removeprefix("Bearer "))
    assert not answer.is_error and header.startswith("Bearer ")
    assert module_daemon.token not in json.dumps(document)


def test_the_documented_claude_desktop_bridge_sends_a_header_the_daemon_accepts(module_daemon: RunningDaemon) -> None:
    server = _json_block("mcpServers")["mcpServers"]["theurian"]
    assert server["command"] == "npx" and server["args"][:3] == ["-y", "mcp-remote", COMPAT_URL]
    environment = {key: value.replace("<token>", module_daemon.token) for key, value in server["env"].items()}
    header = re.sub(r"\$\{(\w+)\}", lambda m: environment[m.group(1)], server["args"][server["args"].index(
        "--header") + 1])
    name, value = header.split(":", 1)  # mcp-remote's "Name:value" form
    response = httpx.post(module_daemon.compat_url, json=INITIALIZE, headers=MCP_HEADERS | {name: value.strip()},
                          timeout=10)
    assert response.status_code == 200


def test_the_documented_cursor_file_sends_a_header_the_daemon_accepts_and_lists_names_cursor_keeps(
        module_daemon: RunningDaemon) -> None:
    server = _cursor_block()["mcpServers"]["theurian"]
    assert server["url"] == COMPAT_URL and set(server) == {"url", "headers"}
    header = server["headers"]["Authorization"].replace("<token>", module_daemon.token)
    token = header.removeprefix("Bearer ")
    answer = call_tool(module_daemon.compat_url, "system_capabilities", {}, token=token)
    assert not answer.is_error and header.startswith("Bearer ")
    names = [tool.name for tool in list_tools(module_daemon.compat_url, token=token)]
    assert names and all(re.fullmatch(r"[A-Za-z0-9_]+", name) for name in names)  # Cursor hides any other name


def test_the_documented_codex_lines_name_the_variable_codex_reads_and_its_token_is_accepted(
        module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path) -> None:
    _stand_in(tmp_path, "codex")
    block = next(block for block in _blocks("sh") if "codex mcp add" in block)
    result = _bash(block, module_installation, module_daemon, tmp_path)
    assert result.returncode == 0, result.stderr
    *arguments, token = result.stdout.splitlines()
    assert arguments == ["mcp", "add", "theurian", "--url", module_daemon.compat_url,
                         "--bearer-token-env-var", TOKEN_VARIABLE]
    assert token == module_daemon.token  # what the profile's export hands Codex
    answer = call_tool(module_daemon.compat_url, "system_capabilities", {}, token=token)
    assert not answer.is_error


def test_the_documented_gemini_line_hands_gemini_the_header_the_daemon_accepts(
        module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path) -> None:
    _stand_in(tmp_path, "gemini")
    result = _bash(_shell_line("gemini mcp add"), module_installation, module_daemon, tmp_path)
    assert result.returncode == 0, result.stderr
    arguments = result.stdout.splitlines()[:-1]
    assert arguments[:7] == ["mcp", "add", "--scope", "user", "--transport", "http", "--header"]
    assert arguments[8:] == ["theurian", module_daemon.compat_url]
    name, value = arguments[7].split(": ", 1)
    assert name == "Authorization" and value == f"Bearer {module_daemon.token}"
    response = httpx.post(module_daemon.compat_url, json=INITIALIZE, headers=MCP_HEADERS | {name: value}, timeout=10)
    assert response.status_code == 200
