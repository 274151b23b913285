"""What a tool is to the daemon: a name, its published schemas, a handler, and how it is admitted.

Handlers are plain synchronous functions taking keyword arguments named exactly as their input schema's
properties (less the shared context keys); the dispatcher runs them off the event loop, because every one of them
does blocking file or database work.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final

from serve.gate import AdmissionGate
from theurian.project import Project
from theurian.stamped_store import VerifiedStores

# Admitted by every project-scoped schema through tool-context.schema.json; only projectId is read.
CONTEXT_KEYS: Final = frozenset({"projectId", "snapshotId", "agentId", "taskId"})


class ToolKind(Enum):
    READ = "read"
    WRITE_INTENT = "write-intent"  # drafts a proposal; never an approved-state write


@dataclass(frozen=True)
class ToolHints:
    """The MCP tool annotations a tool's kind implies (hints to a client, never a guarantee it relies on)."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool


# Every tool reads or drafts inside registered projects on this machine: none reaches the open world, and none
# destroys anything (a write-intent tool adds a new proposal file and never overwrites one, so two identical
# calls draft two proposals: not idempotent).
_HINTS: Final = {
    ToolKind.READ: ToolHints(read_only=True, destructive=False, idempotent=True, open_world=False),
    ToolKind.WRITE_INTENT: ToolHints(read_only=False, destructive=False, idempotent=False, open_world=False),
}


@dataclass(frozen=True)
class ServeSettings:
    """What the daemon decided at start-up and every call may read."""

    disclosure_ceiling: str
    read_only: bool = False  # `theurian serve --read-only`: the write-intent tools are not registered
    # The verify-once cache of the stores this process serves: one per daemon, shared by both routes' servers.
    stores: VerifiedStores = field(default_factory=VerifiedStores, compare=False, repr=False)


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
    title: str | None = None  # a human-readable name for clients' menus; derived from the name when unset

    @property
    def hints(self) -> ToolHints:
        return _HINTS[self.kind]

    @property
    def display_title(self) -> str:
        """`title`, or one derived from the name (`review.findSimilar` reads "Review: find similar")."""
        if self.title:
            return self.title
        family, _, verb = self.name.partition(".")
        words = re.sub(r"(?<!^)([A-Z])", r" \1", verb).lower()
        return f"{family.capitalize()}: {words}" if verb else family.capitalize()

    def make_gate(self) -> AdmissionGate | None:
        return AdmissionGate(self.gate_refusal) if self.gate_refusal else None
