"""Talking to a real daemon with the MCP SDK's own client, in either protocol era, with its bearer token.

The token is the one of the installation whose daemon `tests.support.daemon` started at the URL's address, unless
a call passes `token=` (a string to send instead, or `NO_TOKEN` to send none).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final, Literal

import jsonschema
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import schemas
from tests.support.daemon import bearer, token_for

Mode = Literal["legacy", "auto"]
# "legacy" forces the 2025-11-25 era (initialize handshake, sessions); "auto" picks 2026-07-28 (no handshake).
BOTH_ERAS: tuple[Mode, ...] = ("legacy", "auto")
NO_TOKEN: Final = ""


@asynccontextmanager
async def connected(url: str, mode: Mode = "auto", token: str | None = None) -> AsyncIterator[Client]:
    """An SDK client connected to `url`, sending `Authorization: Bearer` (see the module's note)."""
    headers = bearer(token_for(url) if token is None else token)
    async with create_mcp_http_client(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            yield client


@dataclass(frozen=True)
class ToolAnswer:
    is_error: bool
    text: str
    structured: dict[str, Any] | None

    def valid(self, response_schema: str) -> dict[str, Any]:
        """The structured answer of a call that did not refuse, checked against its published response schema."""
        assert not self.is_error, self.text
        assert self.structured is not None
        jsonschema.Draft202012Validator(schemas.load("mcp", response_schema)).validate(self.structured)
        return self.structured


async def call_tools_async(url: str, calls: list[tuple[str, dict[str, Any]]], mode: Mode,
                           token: str | None = None) -> list[ToolAnswer]:
    answers = []
    async with connected(url, mode, token) as client:
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            text = "".join(getattr(block, "text", "") for block in result.content)
            answers.append(ToolAnswer(bool(result.is_error), text, result.structured_content))
    return answers


def call_tool(url: str, name: str, arguments: dict[str, Any], mode: Mode = "auto", *,
              token: str | None = None) -> ToolAnswer:
    """One tools/call through a fresh SDK client."""
    return asyncio.run(call_tools_async(url, [(name, arguments)], mode, token))[0]


def call_tools(url: str, calls: list[tuple[str, dict[str, Any]]], mode: Mode = "auto", *,
               token: str | None = None) -> list[ToolAnswer]:
    """Several tools/calls through one SDK client connection."""
    return asyncio.run(call_tools_async(url, calls, mode, token))


def list_tools(url: str, mode: Mode = "auto", *, token: str | None = None) -> list[Any]:
    async def go() -> list[Any]:
        async with connected(url, mode, token) as client:
            return list((await client.list_tools()).tools)

    return asyncio.run(go())
