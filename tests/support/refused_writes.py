"""A folder that refuses every write made inside it, as the file system would, without root (these tests may run
as root, whom a folder's mode does not stop): a Python audit hook raises the operating system's own `OSError` for
every directory made and every file opened for writing inside the folder, before the operation happens.

    refusing(folder, code)          in this process, for the block (a `call_locally`, a dispatcher call)
    refusing_binary(path, folder, code)   a `theurian` console script that refuses the same in its process (a
                                          daemon started by `tests.support.daemon.running_daemon(binary=...)`)

`named=False` raises the error without a file name, as a write through an open file (ENOSPC, EDQUOT) does.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_REPOSITORY = Path(__file__).resolve().parents[2]
_EVENTS = ("os.mkdir", "open")
# (the folder's real path, the errno, whether the error names the path, the events refused): the innermost block's.
_refusing: list[tuple[str, int, bool, tuple[str, ...]]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _refusing or event not in _refusing[-1][3]:
        return
    if event == "os.mkdir" and args:
        path = args[0]
    elif event == "open" and len(args) >= 3:
        mode, flags = args[1], args[2]
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS)
        if not writes:
            return
        path = args[0]
    else:
        return
    if not isinstance(path, str | bytes | os.PathLike):
        return
    folder, code, named, _ = _refusing[-1]
    full = os.path.abspath(os.fsdecode(path))
    if full.startswith(folder + os.sep):
        raise OSError(code, os.strerror(code), *((full,) if named else ()))


sys.addaudithook(_audit)  # once per process: an audit hook cannot be removed, so it does nothing outside a block


@contextmanager
def refusing(folder: Path, code: int, *, named: bool = True, events: tuple[str, ...] = _EVENTS) -> Iterator[None]:
    """Every write inside `folder` fails with `code` until the block ends (`events=("open",)`: only a file opened
    for writing, so folders can still be made)."""
    _refusing.append((os.path.realpath(folder), code, named, events))
    try:
        yield
    finally:
        _refusing.pop()


def refusing_binary(path: Path, folder: Path, code: int, *, named: bool = True) -> Path:
    """An executable at `path` that is the `theurian` console script with every write inside `folder` failing
    with `code` for the life of its process."""
    setting = json.dumps([os.path.realpath(folder), code, named, _EVENTS])
    path.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"sys.path.insert(0, {str(_REPOSITORY)!r})\n"
        "from tests.support import refused_writes\n"
        f"folder, code, named, events = json.loads({setting!r})\n"
        "refused_writes._refusing.append((folder, code, named, tuple(events)))\n"
        "from theurian.cli.entry import run\n"
        "run()\n",
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path
