"""The MCP Inspector CLI (installed by `make inspector` from scripts/inspector's lock) against a daemon's route."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
INSPECTOR = REPO / ".tools/inspector/node_modules/.bin/mcp-inspector"
INSPECTOR_TOOL_REFUSED_EXIT = 5


def inspect(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `mcp-inspector --cli url --transport http args...`; fails the test when the Inspector is not installed.

    The transport is named: the Inspector guesses it from a URL ending in /mcp only, not /mcp/compat."""
    if not INSPECTOR.exists():
        pytest.fail("the MCP Inspector CLI is not installed: run `make inspector` (make test does it)")
    return subprocess.run([str(INSPECTOR), "--cli", url, "--transport", "http", *args], capture_output=True,
                          text=True, timeout=120, cwd=REPO)


def first_json(text: str) -> Any:
    """The first JSON document the Inspector printed."""
    return json.JSONDecoder().raw_decode(text.lstrip())[0]
