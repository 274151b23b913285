"""The words the CLI shows for an error no command handled itself: one owner for the top-level handler
(`theurian.cli.main`) and for `sync`, which reports each failed stage as that handler would have."""

from __future__ import annotations

from theurian.disk_faults import access_fault, permission_text, storage_fault_text
from theurian.errors import PathEscapeError, TheurianError


def escape_text(exc: PathEscapeError) -> str:
    """An escape as the CLI shows it: what escaped, named, and the cure the daemon gives for the same place."""
    if exc.cured:
        return exc.message
    from theurian.places import escape_cure

    return f"{exc.message}. {escape_cure(exc.relative)}"


def os_error_text(exc: OSError) -> str:
    """What the file system said no to, where, and the cure (an ordinary condition, a full disk, a folder this
    user may not write), or in its own words."""
    fault = storage_fault_text(exc) or permission_text(exc)
    if fault is not None:
        return fault
    where = f": {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or type(exc).__name__}{where}"


def domain_text(exc: TheurianError) -> str:
    """A domain error as the CLI shows it: its message, unless it was raised over a permission refusal (a store
    "cannot be served", a state "damaged", when this user may only not read it): then that refusal, named with its
    cure, since the message's cure (rebuild it, delete it) would not reach the cause."""
    return access_text(exc) or exc.message


def access_text(exc: BaseException) -> str | None:
    """The permission refusal `exc` is or was raised over (`disk_faults.access_fault`), in words with its cure; None
    when there is none."""
    fault = access_fault(exc)
    return None if fault is None else permission_text(fault)


def unexpected_text(exc: Exception) -> str:
    """An error no command raised on purpose: a write the disk refused (inside a DuckDB or SQLite error too) named
    as the ordinary condition it is, a permission refusal (a DuckDB error's too) as a path this user may not read
    or write, anything else as the unexpected failure it is."""
    fault = storage_fault_text(exc) or access_text(exc)
    if fault is not None:
        return fault
    return f"unexpected failure ({type(exc).__name__}: {exc})"
