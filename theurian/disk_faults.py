"""A write the file system refused for an ordinary reason (no space left, a quota, a read-only file system, a
file size limit), told apart from a fault, however it arrived: as an `OSError`, or inside a DuckDB or SQLite
error, which carry the operating system's words in their message (DuckDB: `Could not write file "PATH": No space
left on device`) or their own code (SQLite: `SQLITE_FULL`, "database or disk is full", and no path).

    storage_condition(exc) -> str | None      the condition in words, or None for anything else
    storage_fault_text(exc) -> str | None     "cannot write PLACE: CONDITION", one line, or None

The condition is the operator's to cure (free space, raise the quota or the limit, remount), so the CLI names the
place and the condition and exits 1 ("failed"), never "unexpected failure (FatalException: …)". Only the type's
module and the message are looked at: the kernel imports neither database engine.
"""

from __future__ import annotations

import errno
import re
import sqlite3
from typing import Final

# (errno, the operating system's own words as DuckDB quotes them, what the CLI says)
_CONDITIONS: Final = (
    (errno.ENOSPC, "no space left on device", "no space left on the device"),
    (errno.EDQUOT, "disk quota exceeded", "the disk quota is exceeded"),
    (errno.EROFS, "read-only file system", "the file system is read-only"),
    (errno.EFBIG, "file too large", "the file would pass the file size limit (ulimit -f)"),
)
# SQLite's codes for the same conditions (a write failing with EFBIG comes back as SQLITE_IOERR_WRITE).
_SQLITE_CONDITIONS: Final = {
    "SQLITE_FULL": "no space left on the device (SQLite: database or disk is full)",
    "SQLITE_READONLY": "the file system or the file is read-only (SQLite: attempt to write a readonly database)",
    "SQLITE_IOERR_WRITE": "the write failed (SQLite: disk I/O error): a full disk, a file size limit or a failing "
                          "device",
}
# Every SQLite database Theurian writes is under a project's .theurian/state/; SQLite's messages name no file.
_SQLITE_PLACE: Final = "a SQLite database under .theurian/state/ (or SQLite's temp folder)"
_QUOTED_FILE: Final = re.compile(r'file "([^"]+)"')


def storage_condition(exc: BaseException) -> str | None:
    """The ordinary condition a write failed on, in words; None when `exc` is not one."""
    if isinstance(exc, OSError):
        return next((words for code, _, words in _CONDITIONS if exc.errno == code), None)
    if isinstance(exc, sqlite3.Error):
        return _SQLITE_CONDITIONS.get(getattr(exc, "sqlite_errorname", "") or "")
    if type(exc).__module__.lstrip("_").startswith("duckdb"):  # its classes live in `_duckdb`
        message = str(exc).lower()
        return next((words for _, said, words in _CONDITIONS if said in message), None)
    return None


def storage_fault_text(exc: BaseException) -> str | None:
    """`cannot write PLACE: CONDITION` for a write refused for an ordinary reason; None for anything else."""
    condition = storage_condition(exc)
    if condition is None:
        return None
    return f"cannot write {storage_place(exc)}: {condition}"


def storage_place(exc: BaseException) -> str:
    """The file the write was for, as the error names it (or, for SQLite, where its databases are)."""
    if isinstance(exc, OSError):
        return str(exc.filename) if exc.filename else "a file"
    if isinstance(exc, sqlite3.Error):
        return _SQLITE_PLACE
    quoted = _QUOTED_FILE.search(str(exc))
    return quoted.group(1) if quoted else "a DuckDB database file"
