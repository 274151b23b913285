"""Reading a file of the evidence lake safely: only a regular file, never blocking, never following a link out
of the lake, never more than MAX_RECORD_FILE_BYTES (SEC-7).

The one implementation behind the lake's one reader (`evidence.lake_read`: record files and run manifests):
resolve a link only inside the lake, `lstat` what it names, open it non-blocking and without following a link at
its leaf, and check the open descriptor again, so a FIFO or link swapped in between the check and the open is
refused rather than waited on or followed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from evidence.errors import NotRegularFile
from theurian.containment import resolve_inside
from theurian.errors import PathEscapeError
from theurian.project import REVIEW_DIR

# No record comes near this: a thread of 1,000 comments of GitHub's longest body (65,536 characters, at most four
# bytes each) is 256 MiB. A larger file is refused unread, never held in memory whole.
MAX_RECORD_FILE_BYTES: Final = 256 * 1024 * 1024
# A run manifest lists every record of its run, ~320 bytes each: this bound is a run of over three million.
MAX_MANIFEST_FILE_BYTES: Final = 1024 * 1024 * 1024
_READ_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW


def read_regular(root: Path, relative: str, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file at `relative` under the resolved lake `root`, never blocking on what is not.

    A link is followed only when it resolves inside `root`; what it resolves to, like any entry, must be a
    regular file, of at most `max_bytes` (default MAX_RECORD_FILE_BYTES).

    Raises:
        NotRegularFile: a FIFO, a folder, a device, a link out of `.theurian/review`, or too large.
        OSError: the file system refused the read.
    """
    path = root / relative
    if stat.S_ISLNK(os.lstat(path).st_mode):
        try:
            path = resolve_inside(root, relative)
        except PathEscapeError:
            raise NotRegularFile(f"a link out of {REVIEW_DIR}, not followed") from None
    if not stat.S_ISREG(os.lstat(path).st_mode):
        raise NotRegularFile("not a regular file")
    return read_opened(path, max_bytes)


def read_opened(path: str | Path, max_bytes: int | None = None, *, dir_fd: int | None = None) -> bytes:
    """Open `path` without following a link at its leaf and without blocking, check the descriptor is a regular
    file of at most `max_bytes` (default MAX_RECORD_FILE_BYTES), and read it to its end: the first `read` asks for
    one byte past its size, and reading goes on until one returns nothing, so neither a short read nor a file
    that grew since the `fstat` is cut off (one that grows past the bound is refused). A first `read` that
    returns exactly the size the `fstat` gave, one byte short of what it asked, has met the end: the read that
    would return nothing is not made.

    `dir_fd`: a descriptor of the folder a bare name `path` lies in (`os.open`'s), so the kernel walks one
    component rather than the whole path (a reader of many files of one folder opens the folder once).

    For a caller that has already ruled out a link and a special file (a scan's file type), this is the whole
    check at a third of `read_regular`'s system calls.

    Raises:
        NotRegularFile: not a regular file at the open, or too large.
        OSError: the file system refused the read, or the leaf is a link (ELOOP).
    """
    bound = MAX_RECORD_FILE_BYTES if max_bytes is None else max_bytes
    fd = os.open(path, _READ_FLAGS, dir_fd=dir_fd)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegularFile("not a regular file")
        size = status.st_size
        if size > bound:
            raise _too_large(bound)
        first = os.read(fd, size + 1)
        if len(first) == size:
            return first  # the file as its fstat gave it, and not one byte more: no read returning nothing
        if len(first) > bound:
            raise _too_large(bound)
        return _read_on(fd, first, bound) if first else first
    finally:
        os.close(fd)


def _read_on(fd: int, first: bytes, bound: int) -> bytes:
    """An open file read to its end after a `first` read that a short read or a growth since its `fstat` left
    unfinished: reading goes on until a read returns nothing.

    Raises:
        NotRegularFile: the file passes `bound` bytes.
    """
    chunks, total = [first], len(first)
    while chunk := os.read(fd, 1 << 20):
        total += len(chunk)
        if total > bound:
            raise _too_large(bound)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(bound: int) -> NotRegularFile:
    return NotRegularFile(f"larger than {bound} bytes, not read")
