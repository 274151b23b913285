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
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_name, mode)
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
