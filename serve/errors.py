"""The serve package's exception tree.

    TheurianError (theurian.errors)
    ├── ServeSetupError        the registered tools cannot be served as built (the daemon stops at start-up)
    │   ├── SchemaFlattenError an input schema cannot be flattened exactly for tools/list
    │   └── ToolNameError      a tool name has no form a strict client accepts, or two names share one
    └── PortInUseError         the daemon's port is taken (by another daemon, or by anything else)

    Exception
    └── ToolRefusal            raised inside a tool to refuse a call: `message` is the refusal text the caller
        │                      reads (the dispatcher sends it as is; `theurian.cli`'s read commands print it)
        └── UnwritableRefusal  a write-intent tool's write the file system refused (permission, flag, read-only,
                               full, quota): `operator_text` names the place absolutely, for the daemon's log

No caller sees a traceback: the dispatcher turns a ToolRefusal or a TheurianError into a refusal, and the CLI
turns a start-up error into one line and exit 1.
"""

from __future__ import annotations

from theurian.errors import TheurianError


class ServeSetupError(TheurianError):
    """The registered tools cannot be served as built (a bug in this build, found before serving)."""


class SchemaFlattenError(ServeSetupError):
    """An input schema uses a construct that cannot be flattened without changing what it accepts."""


class ToolNameError(ServeSetupError):
    """A tool's name has no strict-client form, or two tools' names share one."""


class PortInUseError(TheurianError):
    """Another process (usually another daemon) holds the port."""


class ToolRefusal(Exception):  # noqa: N818 - it names what the caller receives: a refusal, not a fault
    """Raised inside a tool to refuse the call with `message` (shown to the caller as is)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnwritableRefusal(ToolRefusal):
    """A write-intent tool's write the file system refused for the operator to cure: `message` names the place
    project-relative (for the agent), `operator_text` names it absolutely (for the daemon's log)."""

    def __init__(self, message: str, operator_text: str) -> None:
        super().__init__(message)
        self.operator_text = operator_text
