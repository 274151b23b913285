"""The configuration line (or file) each supported MCP client needs to reach this installation's daemon.

One owner for the text docs/clients.md shows and `theurian setup --client` prints: the docs show each one with
`$(theurian auth token)` (shell lines, runnable as they are) or `<token>` in place of the token, and a test holds
the two to the same template.
"""

from __future__ import annotations

import json
from typing import Final

from theurian.access_token import TOKEN_ENV
from theurian.daemon_address import COMPAT_PATH, DEFAULT_HOST, MCP_PATH, url
from theurian.errors import UsageError

CLIENTS: Final = ("claude-code", "vscode", "inspector", "claude-desktop", "cursor", "codex", "gemini-cli")
SERVER_NAME: Final = "theurian"
# Where a terminal client started from the user's shell reads the token when it is named rather than written: the
# shell profile sets it (docs/clients.md), so a rotated token reaches the next session without editing anything.
TOKEN_VARIABLE: Final = TOKEN_ENV
INSPECTOR_PACKAGE: Final = "@modelcontextprotocol/inspector@2.12.0"  # the version the e2e tests drive
VSCODE_INPUT_ID: Final = "theurian-token"


# Clients that accept only tool names matching ^[a-zA-Z0-9_-]{1,64}$, or rewrite a dot into an underscore before a
# model sees the name (docs/clients.md, "Which route"): they are pointed at the route serving the same tools under
# underscore names, where the daemon's own texts name the tools as the model sees them.
COMPAT_ROUTE_CLIENTS: Final = frozenset({"vscode", "claude-desktop", "cursor", "codex", "gemini-cli"})


def client_url(client: str, port: int, host: str = DEFAULT_HOST) -> str:
    """The route `client` must use: /mcp/compat for the clients that refuse a dot in a tool name, /mcp otherwise."""
    return url(host, port, COMPAT_PATH if client in COMPAT_ROUTE_CLIENTS else MCP_PATH)


def client_note(client: str) -> str | None:
    """What else `client`'s line needs before it connects, for stderr (None: the line is all it needs)."""
    if client == "codex":
        return (f"codex reads the token from {TOKEN_VARIABLE} in the environment it starts in: add "
                f'`export {TOKEN_VARIABLE}="$(theurian auth token)"` to your shell profile')
    return None


def client_config(client: str, url: str, token: str) -> str:
    """What to run or paste for `client`. VS Code's file names a prompt instead of the token: the file usually
    sits in a project, where the token must never be written. Codex's line names TOKEN_VARIABLE, which Codex reads
    from its environment at each start.

    Raises:
        UsageError: `client` is not one of CLIENTS.
    """
    header = f"Authorization: Bearer {token}"
    if client == "claude-code":
        return f'claude mcp add --transport http {SERVER_NAME} {url} --header "{header}"'
    if client == "inspector":
        return f'npx {INSPECTOR_PACKAGE} --cli {url} --header "{header}" --method tools/list'
    if client == "vscode":
        return json.dumps({
            "inputs": [{"type": "promptString", "id": VSCODE_INPUT_ID, "password": True,
                        "description": "Theurian access token (theurian auth token)"}],
            "servers": {SERVER_NAME: {"type": "http", "url": url,
                                      "headers": {"Authorization": f"Bearer ${{input:{VSCODE_INPUT_ID}}}"}}},
        }, indent=2)
    if client == "claude-desktop":
        # mcp-remote bridges Claude Desktop's command-started servers to HTTP; the header goes through `env`
        # because Claude Desktop splits arguments holding a space.
        return json.dumps({"mcpServers": {SERVER_NAME: {
            "command": "npx", "args": ["-y", "mcp-remote", url, "--header", "Authorization:${THEURIAN_AUTH}"],
            "env": {"THEURIAN_AUTH": f"Bearer {token}"}}}}, indent=2)
    if client == "cursor":  # ~/.cursor/mcp.json, in the user's folder
        return json.dumps({"mcpServers": {SERVER_NAME: {"url": url, "headers": {"Authorization": f"Bearer {token}"}}}},
                          indent=2)
    if client == "codex":  # Codex refuses a bearer token written in its config: it names the variable instead
        return f"codex mcp add {SERVER_NAME} --url {url} --bearer-token-env-var {TOKEN_VARIABLE}"
    if client == "gemini-cli":
        return f'gemini mcp add --scope user --transport http --header "{header}" {SERVER_NAME} {url}'
    raise UsageError(f"--client {client[:40]!r} is not one of {', '.join(CLIENTS)}")
