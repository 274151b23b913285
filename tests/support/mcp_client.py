"""Talking to a real daemon with the MCP SDK's own client, in either protocol era."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

from mcp import Client

Mode = Literal["legacy", "auto"]
# "legacy" forces the 2025-11-25 era (initialize handshake, sessions); "auto" picks 2026-07-28 (no handshake).
BOTH_ERAS: tuple[Mode, ...] = ("legacy", "auto")


@dataclass(frozen=True)
class ToolAnswer:
    is_error: bool
    text: str
    structured: dict[str, Any] | None


async def call_tools_async(url: str, calls: list[tuple[str, dict[str, Any]]], mode: Mode) -> list[ToolAnswer]:
    answers = []
    async with Client(url, mode=mode) as client:
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            text = "".join(getattr(block, "text", "") for block in result.content)
            answers.append(ToolAnswer(bool(result.is_error), text, result.structured_content))
    return answers


def call_tool(url: str, name: str, arguments: dict[str, Any], mode: Mode = "auto") -> ToolAnswer:
    """One tools/call through a fresh SDK client."""
    return asyncio.run(call_tools_async(url, [(name, arguments)], mode))[0]


def call_tools(url: str, calls: list[tuple[str, dict[str, Any]]], mode: Mode = "auto") -> list[ToolAnswer]:
    """Several tools/calls through one SDK client connection."""
    return asyncio.run(call_tools_async(url, calls, mode))


def list_tools(url: str, mode: Mode = "auto") -> list[Any]:
    async def go() -> list[Any]:
        async with Client(url, mode=mode) as client:
            return list((await client.list_tools()).tools)

    return asyncio.run(go())
