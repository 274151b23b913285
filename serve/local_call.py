"""One tool call answered in this process, as the daemon answers it: what the CLI's read commands go through, so an
operator sees exactly what an agent sees.

The same tiers run in the same order as on the wire: the project resolved from the registry (`resolve_project`,
state containment included), the arguments checked against the tool's published input schema (`InputValidator`),
then the tool's own handler (its argument checks, refusals and row shaping), and a domain error turned into the
refusal text the dispatcher would send (`serve.dispatch`). Only the transport, the admission gates (which bound
concurrent daemon callers) and the worker threads are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from serve.dispatch import _translate as refusal_text  # the dispatcher's own translation, not a copy
from serve.errors import ToolRefusal
from serve.tooling import CONTEXT_KEYS, Call, ServeSettings
from serve.tools import registered_tools
from serve.validation import InputValidator
from theurian.errors import TheurianError
from theurian.project import resolve_project


def call_locally(tool_name: str, arguments: Mapping[str, Any], settings: ServeSettings) -> dict[str, Any]:
    """The structured result `tool_name` answers `arguments` with (`projectId` among them for a project-scoped
    tool), exactly as an MCP client would receive it.

    Raises:
        ToolRefusal: the call is refused; `message` is the refusal text an agent would read.
        KeyError: no tool of that name is registered in this build.
    """
    tool = {t.name: t for t in registered_tools()}[tool_name]
    problem = InputValidator().problem(tool.name, tool.input_schema, arguments)
    if problem is not None:
        raise ToolRefusal(problem)
    try:
        project = resolve_project(str(arguments["projectId"])) if tool.project_scoped else None
        handler_args = {key: value for key, value in arguments.items() if key not in CONTEXT_KEYS}
        return dict(tool.handler(Call(settings=settings, project=project), **handler_args))
    except TheurianError as exc:
        raise ToolRefusal(refusal_text(exc)) from None
