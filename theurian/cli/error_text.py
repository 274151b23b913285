"""The words the CLI shows for an error no command handled itself: one owner for the top-level handler
(`theurian.cli.main`) and for `sync`, which reports each failed stage as that handler would have."""

from __future__ import annotations

from theurian.errors import PathEscapeError


def escape_text(exc: PathEscapeError) -> str:
    """An escape as the CLI shows it: what escaped, named, and the cure the daemon gives for the same place."""
    if exc.cured:
        return exc.message
    from theurian.places import escape_cure

    return f"{exc.message}. {escape_cure(exc.relative)}"


def os_error_text(exc: OSError) -> str:
    """What the file system said no to, and where."""
    where = f": {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or type(exc).__name__}{where}"
