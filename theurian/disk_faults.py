"""A write the file system refused for an ordinary reason (no space left, a quota, a read-only file system, a
file size limit), told apart from a fault, however it arrived: as an `OSError`, or inside a DuckDB or SQLite
error, which carry the operating system's words in their message (DuckDB: `Could not write file "PATH": No space
left on device`) or their own code (SQLite: `SQLITE_FULL`, "database or disk is full", and no path).

    storage_condition(exc) -> str | None      the condition in words, or None for anything else
    storage_fault_text(exc) -> str | None     "cannot write PLACE: CONDITION; CURE", one line, or None
    permission_text(exc) -> str | None        the same for a folder or file this user may not write (EACCES, EPERM),
                                              or "cannot read PLACE: …; CURE" for one it may not read or search
    access_fault(exc) -> OSError | None       the permission refusal an error is or was raised over (a DuckDB
                                              error's "Permission denied" on the file it quotes included)
    project_write_text(exc, root, folder)     either, for a write inside a project: the place that refused, every
                                              path relative to its root (for an agent, shown no absolute path)

A permission refusal says nothing of what was being done: a read is told from a write by the file system (the
path, or a folder on the way to it, this user may not read or search), or by the caller that knows it read.

The condition is the operator's to cure (free space, raise the quota or the limit, remount, give the folder to
this user), so the CLI names the place, the condition and the cure and exits 1 ("failed"), never "unexpected
failure (FatalException: …)". Only the type's module and the message are looked at: the kernel imports neither
database engine. A write goes through a temp file beside its target (`.NAME.RANDOM.tmp`, `.NAME.RANDOM.building`),
which is what the error names and what the operator never made: the place is the target's name and its folder.
"""

from __future__ import annotations

import errno
import os
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Final

from theurian.text import shell_word

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
_PERMISSION_DENIED: Final = "permission denied"  # the operating system's words, as DuckDB quotes them
# A temp file beside its target, as `tempfile.mkstemp(prefix=f".{name}.", suffix=...)` names one (8 of letters,
# digits and `_`) or as a build names it with its pid (`theurian.durable`, `projection.build_temp`, `evidence.batch`).
_TEMP_BESIDE: Final = re.compile(r"\.(?P<target>.+?)\.(?:[a-z0-9_]{8}|\d+)(?:\.tmp|\.building)?")
# What cures each condition, given the folder the write was in (a shell word).
_CURES: Final = {
    errno.ENOSPC: "free space there (`df -h {folder}` shows what is left), then run the command again",
    errno.EDQUOT: "free space within the disk quota or have it raised (`quota -s` shows it), then run the command "
                  "again",
    errno.EROFS: "remount it read-write (`findmnt -T {folder}` names the mount), or work on a copy on a writable "
                 "file system",
    errno.EFBIG: "raise it (`ulimit -f unlimited` in the shell that runs theurian), then run the command again",
}


def storage_condition(exc: BaseException) -> str | None:
    """The ordinary condition a write failed on, in words; None when `exc` is not one."""
    if isinstance(exc, OSError):
        return next((words for code, _, words in _CONDITIONS if exc.errno == code), None)
    if isinstance(exc, sqlite3.Error):
        return _SQLITE_CONDITIONS.get(getattr(exc, "sqlite_errorname", "") or "")
    if _is_duckdb(exc):
        message = str(exc).lower()
        return next((words for _, said, words in _CONDITIONS if said in message), None)
    return None


def storage_fault_text(exc: BaseException, shown: Callable[[Path], str] = str) -> str | None:
    """`cannot write PLACE: CONDITION; CURE` for a write refused for an ordinary reason; None for anything else.
    `shown` names a path in the place and the cure."""
    condition = storage_condition(exc)
    if condition is None:
        return None
    named = _named_path(exc)
    if named is None:
        return f"cannot write {_unnamed_place(exc)}: {condition}"
    place, folder = written_place(named, shown)
    code = next((code for code, _, words in _CONDITIONS if words == condition), None)
    cure = _CURES[code].format(folder=shell_word(shown(folder))) if code in _CURES else None
    return f"cannot write {place}: {condition}" + (f"; {cure}" if cure else "")


def permission_text(exc: OSError, shown: Callable[[Path], str] = str, *, reading: bool = False) -> str | None:
    """`cannot write PLACE: …; CURE` for a file system operation refused to this user (EACCES) or to anyone
    (EPERM: an immutable or append-only flag, which even root meets); `cannot read PLACE: …; CURE` for one refused
    because this user may not read the path or search a folder on the way to it (`reading`: the caller knows it
    was a read, of the path itself); None for any other error or one naming no path. An absent path was being made,
    so it is its folder that refused. `shown` names a path. Never raises: the file system is only asked."""
    if exc.errno not in (errno.EACCES, errno.EPERM) or not exc.filename:
        return None
    target = Path(os.fsdecode(exc.filename))
    user = _user()
    unreadable = target if reading else _unreadable(target)
    if exc.errno == errno.EACCES and unreadable is not None:
        where = shell_word(shown(unreadable))
        return (f"cannot read {shown(unreadable)}: permission denied to this user ({user}); `ls -ld {where}` shows "
                f"its owner and mode; as root or its owner, `chown -R {shell_word(user)} {where} && chmod -R u+rwX "
                f"{where}` gives it to this user (or run theurian as the user who owns it)")
    place, folder = written_place(target, shown)
    if exc.errno == errno.EPERM:  # the flag is on the file itself when it exists, else on the folder refusing it
        flagged = shell_word(shown(target if _exists(target) and not _TEMP_BESIDE.fullmatch(target.name)
                                   else folder))
        return (f"cannot write {place}: the operation is not permitted (an immutable or append-only flag refuses "
                f"even root: `lsattr -d {flagged}` shows it); as root, `chattr -i -a {flagged}` clears it")
    # The whole folder: a write makes a temp file beside its target, so the folder must be writable.
    return (f"cannot write {place}: permission denied to this user ({user}); as root or its owner, "
            f"`chown -R {shell_word(user)} {shell_word(shown(folder))}` gives it to this user (or run theurian as "
            "the user who owns it)")


def access_fault(exc: BaseException) -> OSError | None:
    """The permission refusal (EACCES, EPERM) naming a path that `exc` is, or was raised over (its causes and
    contexts followed: a store's "cannot be served" raised over the stat or the attach that was refused); None when
    there is none. DuckDB's is rebuilt as the OSError it reported (`Cannot open file "PATH": Permission denied`)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError):
            if current.errno in (errno.EACCES, errno.EPERM) and current.filename:
                return current
        elif _is_duckdb(current) and _PERMISSION_DENIED in str(current).lower():
            named = _named_path(current)
            if named is not None:
                return PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(named))
        current = current.__cause__ or current.__context__
    return None


def _unreadable(target: Path) -> Path | None:
    """The first of `target`'s folders this user may not search, else `target` itself when it exists and this user
    may not read it (nor, a folder, search it); None when every step is open (so the refusal was of a write)."""
    for folder in reversed(target.parents):
        if _exists(folder) and not os.access(folder, os.X_OK):
            return folder
    if not _exists(target):
        return None
    modes = os.R_OK | (os.X_OK if _is_dir(target) else 0)
    return None if os.access(target, modes) else target


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # a folder on the way this user may not search: it cannot tell, so it does not know it is there
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def project_write_text(exc: OSError, root: Path, folder: str, *, relative: bool = True) -> str | None:
    """`storage_fault_text` or `permission_text` for a write inside the project at `root` into its `folder`
    (project-relative), every path named relative to the root (so the cure's commands run in the project's root)
    or, not `relative`, absolutely (for the operator's log); None for an error neither would name.

    Nothing the write made outlives the refusal, so the place is the nearest part of the named path that exists
    (the folder that refused, never a proposal id that was never made). A write through an open file names no
    path, and one outside the project is not the agent's to be shown: either is named as `folder`."""
    base = root.resolve()
    named = _named_path(exc)
    target = named if named is not None and named.is_relative_to(base) else base / folder
    while target != base and not _exists(target) and not _TEMP_BESIDE.fullmatch(target.name):
        target = target.parent
    located = OSError(exc.errno, exc.strerror, str(target))

    def shown(path: Path) -> str:
        if not relative:
            return str(path)
        return path.relative_to(base).as_posix() if path.is_relative_to(base) else folder

    return storage_fault_text(located, shown) or permission_text(located, shown)


def written_place(path: Path, shown: Callable[[Path], str] = str) -> tuple[str, Path]:
    """How a refusal names the place a write to `path` was for (each path as `shown` names it), and the folder it
    was in: for a temp file beside its target, or a file inside a temp folder a build fills
    (`.review-store.duckdb.RANDOM.building/…`), the target's name in that folder (never the temp's name); else
    `path` itself."""
    for part in (path, *path.parents):
        temp = _TEMP_BESIDE.fullmatch(part.name)
        if temp is not None:
            return f"{temp.group('target')} in {shown(part.parent)}/", part.parent
    if _is_dir(path):
        return f"in {shown(path)}/", path
    return shown(path), path.parent


def _is_duckdb(exc: BaseException) -> bool:
    return type(exc).__module__.lstrip("_").startswith("duckdb")  # its classes live in `_duckdb`


def _named_path(exc: BaseException) -> Path | None:
    """The file the error names (an OSError's filename, the file DuckDB quotes); None for SQLite, which names none."""
    if isinstance(exc, OSError):
        return Path(os.fsdecode(exc.filename)) if exc.filename else None
    if isinstance(exc, sqlite3.Error):
        return None
    quoted = _QUOTED_FILE.search(str(exc))
    return Path(quoted.group(1)) if quoted else None


def _unnamed_place(exc: BaseException) -> str:
    if isinstance(exc, sqlite3.Error):
        return _SQLITE_PLACE
    return "a file" if isinstance(exc, OSError) else "a DuckDB database file"


def _user() -> str:
    """This process's user, by name where the system has one (chown takes either)."""
    import pwd

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())
