"""What a tool is to the daemon: a name, its published schemas, a handler, and how it is admitted.

Handlers are plain synchronous functions taking keyword arguments named exactly as their input schema's
properties (less the shared context keys); the dispatcher runs them off the event loop, because every one of them
does blocking file or database work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from serve.gate import AdmissionGate
from theurian.project import Project

# Admitted by every project-scoped schema through tool-context.schema.json; only projectId is read.
CONTEXT_KEYS: Final = frozenset({"projectId", "snapshotId", "agentId", "taskId"})


class ToolKind(Enum):
    READ = "read"
    WRITE_INTENT = "write-intent"  # drafts a proposal; never an approved-state write


@dataclass(frozen=True)
class ServeSettings:
    """What the daemon decided at start-up and every call may read."""

    disclosure_ceiling: str


@dataclass(frozen=True)
class Call:
    """One call as a handler sees it: the resolved project (for project-scoped tools) and the settings."""

    settings: ServeSettings
    project: Project | None


Handler = Callable[..., Mapping[str, Any]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: str
    output_schema: str
    handler: Handler
    project_scoped: bool
    kind: ToolKind = ToolKind.READ
    gate_refusal: str | None = None  # a gated tool names its own constant refusal
    enforces_sensitivity: bool = False  # serves items filtered by the disclosure ceiling

    def make_gate(self) -> AdmissionGate | None:
        return AdmissionGate(self.gate_refusal) if self.gate_refusal else None
