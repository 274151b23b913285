"""The temporary file or folder a store is built in, beside the live store, and the sweep of those a killed
build left behind.

A build writes into `.<store name>.<random>.building` in the resolved state folder and publishes it with
`os.replace`. SIGKILL (or a power cut) skips every cleanup, so a temp can outlive its build: 18 MB for a
50,000-commit findings store, a folder of NDJSON and a half-written DuckDB file for the review store. Nothing
else would ever remove them, so each build sweeps its own store's leftovers before it starts.

A temp a build is still writing must survive the sweep of a build started beside it. So the building process
holds an exclusive `flock` on its temp for as long as it exists under that name; the kernel drops the lock with
the process, however it ends. A leftover is exactly a temp nobody holds: the sweep takes the lock without
waiting, removes what it locked, and leaves alone anything it cannot lock. A new temp is locked right after it is
created and then checked to still be the entry under its name, so a sweep that won that instant's race costs a
retry, never a build's file.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

SUFFIX: Final = ".building"
_ATTEMPTS: Final = 8


def _pattern(store_name: str) -> re.Pattern[str]:
    # Exactly what `tempfile` makes from our prefix and suffix: its random part is letters, digits and `_`.
    return re.compile(re.escape(f".{store_name}.") + r"[A-Za-z0-9_]+" + re.escape(SUFFIX))


@contextmanager
def building_file(folder: Path, store_name: str) -> Iterator[Path]:
    """A new, locked temp file for `store_name` in `folder`; removed on the way out unless already published."""
    with _claimed(folder, store_name, directory=False) as path:
        try:
            yield path
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


@contextmanager
def building_folder(folder: Path, store_name: str) -> Iterator[Path]:
    """A new, locked temp folder for `store_name` in `folder`; removed with its contents on the way out."""
    with _claimed(folder, store_name, directory=True) as path:
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)


@contextmanager
def _claimed(folder: Path, store_name: str, *, directory: bool) -> Iterator[Path]:
    for _ in range(_ATTEMPTS):
        if directory:
            name = tempfile.mkdtemp(prefix=f".{store_name}.", suffix=SUFFIX, dir=folder)
            try:
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY)
            except FileNotFoundError:
                continue  # another build's sweep took it before this one could lock it: make another
        else:
            fd, name = tempfile.mkstemp(prefix=f".{store_name}.", suffix=SUFFIX, dir=folder)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits out a sweep that locked it first, then sees it gone
            if _same_entry(name, fd):
                yield Path(name)
                return
        finally:
            os.close(fd)
    raise OSError(f"could not claim a temporary build path in {folder}")


def _same_entry(name: str, fd: int) -> bool:
    try:
        entry = os.lstat(name)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (entry.st_dev, entry.st_ino) == (held.st_dev, held.st_ino)


def sweep_leftovers(folder: Path, store_name: str) -> int:
    """Remove every temp of `store_name` in `folder` that no running build holds; return how many.

    Only entries named exactly as this store's temps are touched. A link is removed as a link, never followed,
    and a folder's contents are removed without following any link inside it.
    """
    pattern = _pattern(store_name)
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return 0
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        try:
            removed += _remove_if_unheld(Path(entry.path))
        except OSError:
            continue  # a leftover this process cannot remove costs disk space, never the build
    return removed


def _remove_if_unheld(path: Path) -> bool:
    try:
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode) or not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            os.unlink(path)  # no build makes anything but a file or a folder: nothing can hold this
            return True
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | (os.O_DIRECTORY if stat.S_ISDIR(mode) else 0)
        fd = os.open(path, flags)
    except FileNotFoundError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a build is writing it
        if not _same_entry(str(path), fd):
            return False
        if stat.S_ISDIR(mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)
        return True
    finally:
        os.close(fd)
