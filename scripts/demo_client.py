"""`make demo`'s first client: a real MCP SDK client asks the running daemon a few questions and prints the
answers, so the demo shows the whole path before handing the daemon to you.

It sends `Authorization: Bearer <token>`, the token taken from THEURIAN_MCP_TOKEN (as any client script may),
else from the installation's token file."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from theurian.access_token import client_token

QUESTIONS: list[tuple[str, dict[str, Any]]] = [
    ("system.capabilities", {}),
    ("review.search", {"projectId": "sample", "q": "slow reads", "limit": 2}),
    # Shares no word with the thread it finds: found by meaning (docs/review-similar.md).
    ("review.findSimilar", {"projectId": "sample", "limit": 1,
                            "situation": "showing the raw stack trace to users when something goes wrong"}),
    ("review.findings", {"projectId": "sample", "severity": "HIGH", "limit": 2}),
    ("knowledge.search", {"projectId": "sample", "query": "retry", "limit": 2}),
]


def _summary(name: str, structured: dict[str, Any]) -> str:
    if name == "review.findSimilar":
        lines = [f"count {structured['count']} (model {structured['retrieval']['model']})"]
        for row in structured["records"]:
            lines.append(f"  - similarity {row['similarity']:.2f}, found by {'+'.join(row['foundBy'])}: "
                         f"{row['repository']}#{row['pullRequest']} {row['filePath']}: {row['excerpt'][:110]!r}")
        return "\n".join(lines)
    if name == "system.capabilities":
        return f"tools: {', '.join(structured['tools'])}\n  capabilities: {json.dumps(structured['capabilities'])}"
    rows = structured.get("records") or structured.get("findings") or structured.get("results") or []
    count = f"count {structured.get('count', len(rows))}"
    # Only the tools whose response has `truncated` say it (knowledge.search has none).
    lines = [f"{count}, truncated {structured['truncated']}" if "truncated" in structured else count]
    for row in rows:
        text = row.get("excerpt") or row.get("findingText") or row.get("title") or ""
        where = row.get("recordPath") or row.get("commitSha") or row.get("itemId") or ""
        lines.append(f"  - {where}: {text[:110]!r}")
    return "\n".join(lines)


async def main(url: str) -> int:
    headers = {"Authorization": f"Bearer {client_token(os.environ)}"}
    async with create_mcp_http_client(headers=headers) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        for name, arguments in QUESTIONS:
            if name not in listed:
                continue
            result = await client.call_tool(name, arguments)
            print(f"\n> {name} {json.dumps(arguments)}")
            if result.is_error:
                print("  refused: " + "".join(getattr(block, "text", "") for block in result.content))
                return 1
            print("  " + _summary(name, result.structured_content or {}))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
