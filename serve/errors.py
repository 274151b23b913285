"""The serve package's own errors: the daemon stops at start-up with one (no caller ever sees it).

    TheurianError (theurian.errors)
    └── ServeSetupError        the registered tools cannot be served as built
        ├── SchemaFlattenError  an input schema cannot be flattened exactly for tools/list
        └── ToolNameError       a tool name has no form a strict client accepts, or two names share one
"""

from __future__ import annotations

from theurian.errors import TheurianError


class ServeSetupError(TheurianError):
    """The registered tools cannot be served as built (a bug in this build, found before serving)."""


class SchemaFlattenError(ServeSetupError):
    """An input schema uses a construct that cannot be flattened without changing what it accepts."""


class ToolNameError(ServeSetupError):
    """A tool's name has no strict-client form, or two tools' names share one."""
