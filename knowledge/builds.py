"""One build at a time per project, and the sweep that removes the builds a new one replaced.

`migrate apply` and `index build` each write a new database, then their pointer, then remove the files the
pointer no longer names. Two runs at once used to interleave those steps: each unlinked every build but its
own, so the pointer could end up naming a file the other run had just deleted. A build therefore holds an
exclusive `flock` on `.theurian/state/knowledge-build.lock` from reading the pointer to the end of its sweep
(the second run then sees the first run's result and usually has nothing to do), and the sweep never removes
the file the pointer on disk names, whoever wrote it.

The lock file exists only while a build holds it: the holder unlinks it before releasing, and a waiter that
wakes on an unlinked inode locks the file now in place instead. So the state folder holds only builds and
pointers between runs, and two lockers can never believe they hold two different files.

A killed build leaves its database and SQLite's companions (`-journal`, `-wal`, `-shm`) behind; no pointer
names them, so the next sweep removes them too.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final

LOCK_NAME: Final = "knowledge-build.lock"
# SQLite's side files for a database `x`: `x-journal` (rollback), `x-wal` and `x-shm` (write-ahead log).
COMPANION_SUFFIXES: Final = ("-journal", "-wal", "-shm")


@contextlib.contextmanager
def build_lock(folder: Path) -> Iterator[None]:
    """Hold the project's exclusive build lock (waiting for a running build to finish) for the `with` body."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            held = os.fstat(fd)
            try:
                current = os.stat(path)
                same = (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino)
            except FileNotFoundError:
                same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)  # the previous holder unlinked this file as it released: lock the one in place now
    try:
        yield
    finally:
        path.unlink(missing_ok=True)  # while still holding, so a waiter on this inode re-checks and retries
        os.close(fd)


def sweep(folder: Path, build_name: re.Pattern[str], prefix: str, keep: Iterable[str | None]) -> None:
    """Remove every build in `folder` matching `build_name` (and its SQLite companions) except those in `keep`.

    Call it holding `build_lock`: no other build is in progress then, so every unkept file is superseded or
    orphaned by a killed run.
    """
    kept = {name for name in keep if name}
    for entry in folder.glob(f"{prefix}*"):
        base = entry.name
        for suffix in COMPANION_SUFFIXES:
            if base.endswith(suffix):
                base = base.removesuffix(suffix)
                break
        if build_name.match(base) and base not in kept:
            # A reader holding an old file keeps its open handle; only the name goes.
            entry.unlink(missing_ok=True)
