"""Reading a file safely: only a regular file, never blocking, never more than a bound the caller names.

The one implementation behind every reader of a file Theurian did not just write itself: the evidence lake's
records and run manifests (`evidence.files`), the installation config and the project registry, a project's
`.theurian/config.toml`, the build-stamp secret, a GitHub App's key, the knowledge sources and state pointers.
Open non-blocking (a FIFO opens at once instead of waiting for a writer; `/dev/zero` opens too), then check the
open descriptor: what is not a regular file is refused before a byte is read, and a file past the bound is refused
unread, never held in memory whole. Checking the descriptor rather than the path means a FIFO or link swapped in
between a check and the open is refused rather than waited on.

    read_opened(path, max_bytes)           the bytes, or NotRegularFile (`too_large` tells the two kinds apart)
    read_regular(root, relative, ...)      the same, a link followed only when it stays inside `root`
    regular_status(path)                   the `stat` of a regular file (links followed), for what SQLite opens
    read_text(path, max_bytes, what)       UTF-8 text; every fault an UnreadableFileError naming `what`
    read_toml(path, max_bytes, what)       a TOML document; the same, and a TOML fault too

Bounds (docs/decisions.md, "Bounded reads of the installation's and a project's TOML"): a config file is a few
lines, MAX_CONFIG_FILE_BYTES; the registry a table per project, its own bound in `theurian.registry`.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from theurian.containment import resolve_inside
from theurian.errors import NotRegularFile, PathEscapeError, UnreadableFileError

# The installation config and a project's config are a few lines each: a megabyte is thousands of times that, and
# still small enough to read whole.
MAX_CONFIG_FILE_BYTES: Final = 1 << 20
_NO_FOLLOW_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW
_FOLLOW_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK


def read_opened(path: str | Path, max_bytes: int, *, dir_fd: int | None = None, follow_link: bool = False,
                inspect: Callable[[os.stat_result], None] | None = None) -> bytes:
    """Open `path` without blocking, check the descriptor is a regular file of at most `max_bytes`, and read it to
    its end: the first `read` asks for one byte past its size, and reading goes on until one returns nothing, so
    neither a short read nor a file that grew since the `fstat` is cut off (one that grows past the bound is
    refused). A first `read` that returns exactly the size the `fstat` gave has met the end.

    `follow_link`: False (the default) refuses a link at the leaf (ELOOP), for a path already resolved inside
    its root; True follows it, for the installation's own files (a dotfile manager links them). `dir_fd`: a
    descriptor of the folder a bare name `path` lies in (`os.open`'s). `inspect`: called with the descriptor's
    status once it is known to be a regular file, before the size check and the read; it may raise.

    Raises:
        FileNotFoundError: nothing is there.
        NotRegularFile: not a regular file at the open, or too large (`too_large`).
        OSError: the file system refused the read, or the leaf is a link and `follow_link` is False (ELOOP).
    """
    fd = os.open(path, _FOLLOW_FLAGS if follow_link else _NO_FOLLOW_FLAGS, dir_fd=dir_fd)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegularFile("not a regular file")
        if inspect is not None:
            inspect(status)
        size = status.st_size
        if size > max_bytes:
            raise _too_large(max_bytes)
        first = os.read(fd, size + 1)
        if len(first) == size:
            return first  # the file as its fstat gave it, and not one byte more: no read returning nothing
        if len(first) > max_bytes:
            raise _too_large(max_bytes)
        return _read_on(fd, first, max_bytes) if first else first
    finally:
        os.close(fd)


def read_regular(root: Path, relative: str, max_bytes: int, *, root_name: str) -> bytes:
    """The bytes of the regular file at `relative` under the resolved `root` (named `root_name` in a refusal): a
    link is followed only when it resolves inside `root`, and what it resolves to must be a regular file of at most
    `max_bytes`.

    Raises:
        NotRegularFile: a FIFO, a folder, a device, a link out of `root`, or too large (`too_large`).
        OSError: the file system refused the read.
    """
    path = root / relative
    if stat.S_ISLNK(os.lstat(path).st_mode):
        try:
            path = resolve_inside(root, relative)
        except PathEscapeError:
            raise NotRegularFile(f"a link out of {root_name}, not followed") from None
    if not stat.S_ISREG(os.lstat(path).st_mode):
        raise NotRegularFile("not a regular file")
    return read_opened(path, max_bytes)


def regular_status(path: Path) -> os.stat_result:
    """The status of the regular file at `path` (links followed): for a file handed to SQLite or DuckDB to open,
    which would wait for ever on a FIFO.

    Raises:
        FileNotFoundError: nothing is there.
        NotRegularFile: not a regular file.
        OSError: the file system refused the stat.
    """
    status = os.stat(path)
    if not stat.S_ISREG(status.st_mode):
        raise NotRegularFile("not a regular file")
    return status


def read_text(path: Path, max_bytes: int, what: str, *, follow_link: bool = False) -> str:
    """The UTF-8 text of the regular file at `path`, read as `read_opened` reads; `what` names it in a refusal.

    Raises:
        FileNotFoundError: nothing is there (each caller has its own default).
        UnreadableFileError: not a regular file, too large, refused by the file system, or not UTF-8.
    """
    try:
        data = read_opened(path, max_bytes, follow_link=follow_link)
    except FileNotFoundError:
        raise
    except NotRegularFile as exc:
        raise UnreadableFileError(what, f"cannot be read: {exc.reason}", too_large=exc.too_large) from None
    except OSError as exc:
        raise UnreadableFileError(what, f"cannot be read: {exc.strerror or type(exc).__name__}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableFileError(what, f"is not UTF-8 text (byte {exc.start})", content=True) from None


def read_toml(path: Path, max_bytes: int, what: str, *, follow_link: bool = False) -> dict[str, Any]:
    """The TOML document of the file at `path`, read as `read_text` reads.

    Raises:
        FileNotFoundError: nothing is there.
        UnreadableFileError: as `read_text`, or not valid TOML.
    """
    return toml_document(read_text(path, max_bytes, what, follow_link=follow_link), what)


def toml_document(text: str, what: str) -> dict[str, Any]:
    """`text` parsed as TOML; `what` names its file in a refusal.

    Raises:
        UnreadableFileError: not valid TOML.
    """
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UnreadableFileError(what, f"is not valid TOML ({exc})", content=True) from exc


def others_may_read(path: Path) -> int | None:
    """`path`'s permission bits when its group or others have any access (a private file's never should), else None.

    Raises:
        FileNotFoundError: there is no such file.
    """
    mode = stat.S_IMODE(path.stat().st_mode)
    return mode if mode & 0o077 else None


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
    return NotRegularFile(f"larger than {bound} bytes, not read", too_large=True)
