"""The kernel's exception tree, and the CLI exit codes they map to.

    TheurianError                       message, exit_code (1)
    ├── UsageError                      a command was called with words it cannot act on (2)
    ├── ConfigError                     a configuration file is missing a value or holds one we cannot use (1)
    │   └── UnreadableFileError         a config file cannot be read whole as text or TOML (`theurian.files`);
    │                                   `what`, `reason`, `too_large`
    ├── RegistryError                   the project registry cannot be read or written (1)
    ├── ProjectError                    a project cannot be resolved: not registered, no root, no .theurian/ (1)
    │   ├── ProjectNotRegisteredError   no registration carries this id; `project_id`
    │   └── ProjectUnreadableError      a registration names no root path
    ├── PathEscapeError                 a path resolves outside the root it must stay under (SEC-7); `relative`,
    │   │                               `cured` (the message already names the cure)
    │   └── StateEscapeError            `.theurian/state` (or `.theurian`) resolves outside the project root
    └── AlreadyInPlaceError             the thing asked for is already there (4)

    Exception
    ├── StampRejected                   a derived store's stamp row is not one this installation made (`reason`);
    │                                   each store's reader turns it into its own Unavailable error
    ├── StoreFileFault                  a derived store's file is absent, not a regular file, or unreadable
    │                                   (`reason`); each store's reader turns it into its own Unavailable error
    └── NotRegularFile                  a file `theurian.files` will not read: not a regular file (a FIFO, a
                                        device, a folder, a link out of its root) or `too_large`; `reason`

Every error carries a message fit to show a person as one line; the CLI prints it and exits with `exit_code`,
and the daemon turns it into a refusal. Nothing here ever carries a traceback to a user. The cure for a place
under `.theurian/` that escapes (source or derived) is `theurian.places`'s table; each stage's own errors are in
its package's `errors.py` (`ingest`, `evidence`, `projection`, `knowledge`, `serve`), each a subtree of this one.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INCOMPATIBLE = 3
EXIT_ALREADY_IN_PLACE = 4
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report a SIGINT death
EXIT_TERMINATED = 143  # SIGTERM, stopped as Ctrl-C stops a command, reported as shells report a SIGTERM death


class TheurianError(Exception):
    """Base of every error Theurian raises on purpose."""

    exit_code = EXIT_FAILED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(TheurianError):
    """A command's arguments cannot be acted on."""

    exit_code = EXIT_USAGE


class ConfigError(TheurianError):
    """A configuration file holds something Theurian cannot use."""


class RegistryError(TheurianError):
    """The project registry cannot be read or written.

    `message` is the operator's (it may name the registry's path); `agent_message` is what a tool refusal says,
    which names no filesystem path of the installation (`message` itself when none is given).
    """

    def __init__(self, message: str, *, agent_message: str | None = None) -> None:
        super().__init__(message)
        self.agent_message = message if agent_message is None else agent_message


class UnreadableFileError(ConfigError):
    """A configuration file cannot be read whole as UTF-8 text or TOML (`theurian.files.read_text`, `read_toml`).

    `what` names the file as its caller does; `reason` is the rest of the sentence, without the cure ("cannot be
    read: not a regular file", "is not valid TOML (…)"), for a caller that words its own; `too_large`: refused for
    its size alone. A fault of the content (not UTF-8, not TOML) adds its cure to `message`: edit it by hand.
    """

    def __init__(self, what: str, reason: str, *, too_large: bool = False, content: bool = False) -> None:
        super().__init__(f"{what} {reason}" + ("; edit it by hand" if content else ""))
        self.what = what
        self.reason = reason
        self.too_large = too_large


class ProjectError(TheurianError):
    """A project id or path cannot be resolved to a usable project."""


class PathEscapeError(TheurianError):
    """A path resolves outside the root it must stay under.

    `relative` is the offending path relative to the root it escaped, as the program named it (never the
    resolved target, which may be anywhere on the machine). `cured`: the message already says how to mend it;
    otherwise whoever shows it adds the cure for `relative` (`serve.refusal.escape_cure`).
    """

    def __init__(self, message: str, *, relative: str, cured: bool = False) -> None:
        super().__init__(message)
        self.relative = relative
        self.cured = cured


class AlreadyInPlaceError(TheurianError):
    """The requested state already holds."""

    exit_code = EXIT_ALREADY_IN_PLACE


class ProjectNotRegisteredError(ProjectError):
    """No registration carries this id."""

    def __init__(self, message: str, *, project_id: str) -> None:
        super().__init__(message)
        self.project_id = project_id


class ProjectUnreadableError(ProjectError):
    """A registration exists but names no root path."""


class StateEscapeError(PathEscapeError):
    """`.theurian/state` (or `.theurian`) resolves outside the project root."""


class StampRejected(Exception):  # noqa: N818 - a verdict each store turns into its own Unavailable error
    """A store's stamp row is not one this installation made for this kind, schema and source format.

    `reason` is for the operator's log; callers answer every reason with their one constant refusal.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class StoreFileFault(Exception):  # noqa: N818 - it names a state of the file, as each store's refusal does
    """The store's file cannot be trusted as a store file: absent, not a regular file, or unreadable.

    `reason` is the store's refusal reason ("absent", "not a regular file", "unreadable: <error>").
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NotRegularFile(Exception):  # noqa: N818 - it names what the entry is
    """A file `theurian.files` will not read: `reason` says why, in the words a build reports beside the path;
    `too_large` is True when it was refused for its size alone (else it is not a regular file, or a link out of its
    root)."""

    def __init__(self, reason: str, *, too_large: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.too_large = too_large
