"""An exclusive `flock` on a folder itself, for a read-modify-write of what the folder holds.

A lock on a file that the writer then replaces (an atomic rename) is a lock on a file the next writer no longer
opens; the folder stays put, so its own descriptor is what several writers can agree on. The kernel releases the
lock when the descriptor closes, including when the process dies, so a killed holder never leaves it held.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def folder_held(folder: Path, *, wait: bool = True) -> Iterator[None]:
    """Hold `folder`'s exclusive lock for the `with` body, waiting for another holder unless `wait` is False.

    Raises:
        BlockingIOError: `wait` is False and another process (or descriptor) holds the lock.
        OSError: the folder cannot be opened.
    """
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield
    finally:
        os.close(fd)  # releases the lock
