"""The tool families this build registers.

A family module contributes `Tool`s; only tools that work in this build are listed here, so `tools/list` and
`system.capabilities` describe exactly what is callable.
"""

from __future__ import annotations

from serve.tooling import Tool, ToolKind
from serve.tools.findings import findings_tools
from serve.tools.knowledge import knowledge_tools
from serve.tools.proposals import proposal_tools
from serve.tools.review import review_tools
from serve.tools.review_candidate import review_candidate_tools
from serve.tools.review_concerns import review_concerns_tools
from serve.tools.review_similar import review_similar_tools
from serve.tools.system import system_tools


def registered_tools(*, read_only: bool = False) -> list[Tool]:
    """Every tool this daemon serves, sorted by name; `read_only` leaves out every write-intent tool (before
    system.capabilities is made, so its flags describe what is left)."""
    tools: list[Tool] = []
    tools.extend(findings_tools())
    tools.extend(knowledge_tools())
    tools.extend(proposal_tools())
    tools.extend(review_tools())
    tools.extend(review_candidate_tools())
    tools.extend(review_similar_tools())
    tools.extend(review_concerns_tools())
    if read_only:
        tools = [tool for tool in tools if tool.kind is not ToolKind.WRITE_INTENT]
    tools.extend(system_tools(tools))  # the capabilities handler reads the final list, itself included
    return sorted(tools, key=lambda tool: tool.name)
