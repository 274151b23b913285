"""Durable file writes: a reader sees the old bytes or the new bytes, never a torn file."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_bytes_durably(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write `data` to `path` through a temporary file, fsync, `os.replace`, and an fsync of the directory.

    A crash at any point leaves either the previous file or the new one in place; the temporary file is removed
    on failure.
    """
    directory = path.parent
    temp_name = _synced_temp_beside(path, data, mode=mode, suffix=".tmp")
    try:
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    fsync_directory(directory)


def write_text_durably(path: Path, text: str, *, mode: int = 0o644) -> None:
    """Write UTF-8 `text` durably; see `write_bytes_durably`."""
    write_bytes_durably(path, text.encode("utf-8"), mode=mode)


def fsync_directory(directory: Path) -> None:
    """Persist a directory entry change (a rename or a new file) on file systems that need it."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_file(path: Path) -> None:
    """Persist the bytes of a file written without syncing (a database built with `synchronous = OFF`)."""
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def publish_built_file(built: Path, target: Path, *, mode: int = 0o644) -> None:
    """Swap a fully written file into place: fsync it, `os.replace` it over `target`, fsync the folder.

    For stores built into a temporary file beside the live one: a reader holding the old file keeps it, the next
    opener gets the new one, and a crash leaves one or the other, never a torn file.
    """
    fsync_file(built)
    os.chmod(built, mode)
    os.replace(built, target)
    fsync_directory(target.parent)


def create_private_file_once(path: Path, data: bytes) -> None:
    """`create_file_once` at mode 0600, in a folder made 0700 if it is absent: for a secret (the build-stamp
    secret, the access token)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    create_file_once(path, data, mode=0o600)


def create_file_once(path: Path, data: bytes, *, mode: int) -> bool:
    """Create `path` holding `data` at `mode`, whole or not at all, in its existing folder; a file another process
    created there first is kept, and False returned (True: this call's `data` is the file's).

    The bytes are written and synced in a temporary file first and only then `link`ed to `path` (atomic
    create-if-absent): so two first uses at once agree on one file, a reader never sees it empty or torn, and a
    crash before the link leaves no file at all (an exclusive create followed by a write leaves an empty one that
    every later reader takes for damage).
    """
    temp_name = _synced_temp_beside(path, data, mode=mode, suffix="")
    try:
        try:
            os.link(temp_name, path)
        except FileExistsError:
            return False
        fsync_directory(path.parent)
        return True
    finally:
        os.unlink(temp_name)


def temp_prefix(name: str) -> str:
    """How every temporary file written beside `name` begins: a crash can leave one there, and it is `name`'s."""
    return f".{name}."


def _synced_temp_beside(path: Path, data: bytes, *, mode: int, suffix: str) -> str:
    """A new temporary file in `path`'s folder holding `data`, synced and at `mode` (0600 until it is whole).

    Raises what the write raises, after removing the temporary file.
    """
    fd, temp_name = tempfile.mkstemp(prefix=temp_prefix(path.name), suffix=suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_name, mode)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = temp_name  # a write through the handle names no file: the refusal names the place
        raise
    return temp_name
