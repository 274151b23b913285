"""Reading a file of the evidence lake safely: only a regular file, never blocking, never following a link out
of the lake, never more than MAX_RECORD_FILE_BYTES (SEC-7).

The lake's bounds over the kernel's one reader (`theurian.files`), behind the lake's one reader
(`evidence.lake_read`: record files and run manifests): resolve a link only inside the lake, `lstat` what it
names, open it non-blocking and without following a link at its leaf, and check the open descriptor again, so a
FIFO or link swapped in between the check and the open is refused rather than waited on or followed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from theurian import files
from theurian.project import REVIEW_DIR

# No record comes near this: a thread of 1,000 comments of GitHub's longest body (65,536 characters, at most four
# bytes each) is 256 MiB. A larger file is refused unread, never held in memory whole.
MAX_RECORD_FILE_BYTES: Final = 256 * 1024 * 1024
# A run manifest lists every record of its run, ~320 bytes each: this bound is a run of over three million.
MAX_MANIFEST_FILE_BYTES: Final = 1024 * 1024 * 1024


def read_regular(root: Path, relative: str, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file at `relative` under the resolved lake `root`, never blocking on what is not.

    A link is followed only when it resolves inside `root`; what it resolves to, like any entry, must be a
    regular file, of at most `max_bytes` (default MAX_RECORD_FILE_BYTES).

    Raises:
        NotRegularFile: a FIFO, a folder, a device, a link out of `.theurian/review`, or too large.
        OSError: the file system refused the read.
    """
    bound = MAX_RECORD_FILE_BYTES if max_bytes is None else max_bytes
    return files.read_regular(root, relative, bound, root_name=REVIEW_DIR)


def read_opened(path: str | Path, max_bytes: int | None = None, *, dir_fd: int | None = None) -> bytes:
    """`theurian.files.read_opened` at the lake's bound (default MAX_RECORD_FILE_BYTES), a link at the leaf
    refused: for a caller that has already ruled out a link and a special file (a scan's file type), this is the
    whole check at a third of `read_regular`'s system calls.

    Raises:
        NotRegularFile: not a regular file at the open, or too large.
        OSError: the file system refused the read, or the leaf is a link (ELOOP).
    """
    return files.read_opened(path, MAX_RECORD_FILE_BYTES if max_bytes is None else max_bytes, dir_fd=dir_fd)
