"""What `tools/list` says about one tool: its name on the route, title, annotations and schemas (the input one
flattened, both with each `type` array spelled as `anyOf`), every text of ours in them naming the tools as the
route does."""

from __future__ import annotations

import mcp.types as types

import schemas
from serve.compat import Naming
from serve.flat_schema import MCP_FAMILY, flattened_input_schema
from serve.portable_schema import split_type_unions
from serve.tooling import Tool


def listed_tool(tool: Tool, naming: Naming) -> types.Tool:
    """`tool` as listed on a route named by `naming`.

    Raises:
        SchemaFlattenError: its input schema cannot be flattened exactly (the daemon does not start).
    """
    hints = tool.hints
    return types.Tool(
        name=naming.wire(tool.name),
        title=tool.display_title,
        description=naming.in_text(tool.description),
        input_schema=naming.in_schema(split_type_unions(flattened_input_schema(tool.input_schema))),
        output_schema=naming.in_schema(split_type_unions(schemas.load(MCP_FAMILY, tool.output_schema))),
        annotations=types.ToolAnnotations(
            title=tool.display_title,
            read_only_hint=hints.read_only,
            destructive_hint=hints.destructive,
            idempotent_hint=hints.idempotent,
            open_world_hint=hints.open_world,
        ),
    )
