"""Group commit: a page of changed records made durable together, then renamed into place.

A durable write costs its fsync (one journal commit each when issued one after another) and the fsync of its
directory. A RecordBatch stages each changed record as a temp file next to its target, and `commit()`

1. fsyncs every temp file, the fsyncs issued concurrently so the file system folds them into shared journal
   commits (each file is still fsynced itself: the guarantee is per file, as with `write_bytes_durably`);
2. renames each temp file over its target, in the order the records were put;
3. fsyncs each touched directory once.

A reader, or a SIGKILL at any instant, sees each record file whole, old or new: a target is only ever replaced
by an fsynced file. A killed batch leaves `.<name>.<random>.tmp` files, which readers skip and
`Lake.sweep_temporary_files` removes. `os.sync()` was measured too and is as fast on an idle disk, but it
flushes every file system's dirty data, other programs' included, and on macOS it does not wait for the disk.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any, Final

import orjson

from evidence.lake import Lake, Outcome, PutResult
from theurian.durable import fsync_directory

# Concurrent fsyncs beyond a few dozen stop folding into fewer commits; 16 reached that on the machine measured.
FSYNC_WORKERS: Final = 16
# A page with thousands of threads must not run out of file descriptors: past this many staged files still
# open, they are fsynced and closed early (they are still renamed only at commit).
OPEN_FILES_BOUND: Final = 256
RECORD_FILE_MODE: Final = 0o644


@dataclass
class _Staged:
    path: Path
    temp: str
    data: bytes
    fd: int | None


class RecordBatch:
    """Records put into one lake, invisible until `commit()`. As a context manager it commits on a clean exit
    and discards its temp files when the block raises."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        self._staged: dict[str, _Staged] = {}

    def __enter__(self) -> RecordBatch:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if exc_type is None:
                self.commit()
        finally:
            self.discard()

    def load(self, repository: str, kind: str, key: str) -> dict[str, Any] | None:
        """The record as this batch would leave it: staged bytes if put here, else the lake's."""
        staged = self._staged.get(self.lake.record_path(repository, kind, key))
        if staged is None:
            return self.lake.load(repository, kind, key)
        document = orjson.loads(staged.data)
        return document if isinstance(document, dict) else None

    def put(self, record: Mapping[str, Any]) -> PutResult:
        """Validate and stage a record; unchanged bytes stage nothing. The outcome is the one `Lake.put` would
        report at this point (a second put of the same record compares with the first).

        Raises:
            RecordInvalidError: the record does not validate (nothing is staged).
            RecordKeyError: its key cannot name a file.
        """
        prepared = self.lake.prepare(record)
        earlier = self._staged.get(prepared.relative)
        if earlier is not None:
            # What this batch will leave in place, not the file on disk, is what the record changes.
            prepared = replace(prepared, existing=earlier.data)
        if prepared.outcome is not Outcome.UNCHANGED:
            if earlier is not None:
                del self._staged[prepared.relative]
                self._drop(earlier)
            self._stage(prepared.relative, prepared.path, prepared.data)
        return prepared.result()

    def mark_missing(self, repository: str, kind: str, key: str, run_id: str) -> bool:
        """Stage a stored record marked missing upstream since `run_id`; False if absent or already marked."""
        record = self.load(repository, kind, key)
        if record is None or "missingUpstreamSince" in record:
            return False
        record["missingUpstreamSince"] = run_id
        self.put(record)
        return True

    def __len__(self) -> int:
        return len(self._staged)

    def commit(self) -> int:
        """Make every staged record durable and put it in place; return how many were written.

        Raises:
            OSError: a write, fsync or rename failed; records already renamed are whole, the rest unchanged.
        """
        self._sync([s for s in self._staged.values() if s.fd is not None])
        folders: set[Path] = set()
        written = 0
        while self._staged:
            relative = next(iter(self._staged))
            staged = self._staged[relative]
            os.replace(staged.temp, staged.path)
            del self._staged[relative]
            folders.add(staged.path.parent)
            written += 1
        for folder in sorted(folders):
            fsync_directory(folder)
        return written

    def discard(self) -> None:
        """Remove every staged temp file; the lake is left as it was before this batch."""
        while self._staged:
            _, staged = self._staged.popitem()
            self._drop(staged)

    def _stage(self, relative: str, path: Path, data: bytes) -> None:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        staged = _Staged(path, temp, data, fd)
        self._staged[relative] = staged
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, RECORD_FILE_MODE)
        except BaseException:
            del self._staged[relative]
            self._drop(staged)
            raise
        open_files = [s for s in self._staged.values() if s.fd is not None]
        if len(open_files) >= OPEN_FILES_BOUND:
            self._sync(open_files)

    @staticmethod
    def _sync(staged: list[_Staged]) -> None:
        if not staged:
            return
        try:
            with ThreadPoolExecutor(max_workers=min(FSYNC_WORKERS, len(staged))) as pool:
                list(pool.map(os.fsync, [s.fd for s in staged if s.fd is not None]))
        finally:
            for s in staged:
                if s.fd is not None:
                    os.close(s.fd)
                    s.fd = None

    @staticmethod
    def _drop(staged: _Staged) -> None:
        if staged.fd is not None:
            os.close(staged.fd)
            staged.fd = None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staged.temp)
