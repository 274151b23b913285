"""One tool call answered in this process, as the daemon answers it: what the CLI's read commands go through, so an
operator sees exactly what an agent sees.

The same input path runs as on the wire: the arguments checked once against the tool's published input schema
(`InputValidator.admit`), then what it admitted handed to `serve.dispatch.answer`, the dispatcher's own core (the
project resolved from the registry, state containment included, the tool's handler with its argument checks,
refusals and row shaping, and a domain error turned into the refusal text the daemon would send). Only the
transport, the admission gates (which bound concurrent daemon callers) and the worker threads are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from serve.dispatch import answer
from serve.errors import ToolRefusal
from serve.tooling import ServeSettings
from serve.tools import registered_tools
from serve.validation import InputValidator, Refused


def call_locally(tool_name: str, arguments: Mapping[str, Any], settings: ServeSettings) -> dict[str, Any]:
    """The structured result `tool_name` answers `arguments` with (`projectId` among them for a project-scoped
    tool), exactly as an MCP client would receive it.

    Raises:
        ToolRefusal: the call is refused; `message` is the refusal text an agent would read.
        KeyError: no tool of that name is registered in this build.
    """
    tool = {t.name: t for t in registered_tools()}[tool_name]
    verdict = InputValidator().admit(tool.name, tool.input_schema, arguments)
    if isinstance(verdict, Refused):
        raise ToolRefusal(verdict.message)
    return answer(tool, settings, verdict.arguments)
