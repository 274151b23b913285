"""The MCP Inspector CLI (a third-party MCP client, installed by `make inspector` from scripts/inspector's lock)
run against a daemon's route, with the daemon's bearer token as docs/clients.md tells an operator to pass it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon import token_for

REPO = Path(__file__).resolve().parents[2]
INSPECTOR = REPO / ".tools/inspector/node_modules/.bin/mcp-inspector"
INSPECTOR_TOOL_REFUSED_EXIT = 5


def inspect(url: str, *args: str, token: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`mcp-inspector --cli URL --transport http --header "Authorization: Bearer <token>" ARGS…` (no header when
    the token is ""); fails the test when the Inspector is not installed.

    The transport is named: the Inspector guesses it from a URL ending in /mcp only, not /mcp/compat."""
    if not INSPECTOR.exists():
        pytest.fail("the MCP Inspector CLI is not installed: run `make inspector` (make test does it)")
    sent = token_for(url) if token is None else token
    header = ["--header", f"Authorization: Bearer {sent}"] if sent else []
    return subprocess.run([str(INSPECTOR), "--cli", url, "--transport", "http", *header, *args],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO)


def first_json(text: str) -> Any:
    """The first JSON document the Inspector printed."""
    return json.JSONDecoder().raw_decode(text.lstrip())[0]
