"""A tool this daemon publishes no input schema for is refused at dispatch rather than served."""

import asyncio
from collections.abc import Mapping
from typing import Any

from mcp import Client

from serve.server import build_server
from serve.tooling import Call, ServeSettings, Tool
from serve.tools import registered_tools


def test_a_tool_without_a_published_schema_is_neither_listed_nor_run() -> None:
    ran: list[str] = []

    def handler(call: Call) -> Mapping[str, Any]:
        ran.append("ran")
        return {}

    stray = Tool(name="stray.tool", description="", input_schema="stray-input.schema.json",
                 output_schema="project-list-response.schema.json", handler=handler, project_scoped=False)
    server = build_server(ServeSettings("internal"), [*registered_tools(), stray])

    async def scenario() -> tuple[list[str], Any]:
        async with Client(server) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            return names, await client.call_tool("stray.tool", {})

    names, result = asyncio.run(scenario())
    assert "stray.tool" not in names and "project.list" in names
    assert result.is_error and "No tool 'stray.tool' is served by this daemon" in result.content[0].text
    assert ran == []
