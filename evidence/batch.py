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
        self._open: list[_Staged] = []  # staged, not yet fsynced

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
        on_disk = prepared.existing
        earlier = self._staged.get(prepared.relative)
        if earlier is not None:
            # What this batch would leave in place, not the file on disk, is what the record changes.
            prepared = replace(prepared, existing=earlier.data)
        if prepared.outcome is not Outcome.UNCHANGED:
            if earlier is not None:
                del self._staged[prepared.relative]
                self._drop(earlier)
            if prepared.data != on_disk:  # put back to what the file holds: nothing to rewrite
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
        self._sync()
        folders: set[Path] = set()
        for staged in self._staged.values():
            os.replace(staged.temp, staged.path)
            folders.add(staged.path.parent)
        written = len(self._staged)
        self._staged.clear()
        for folder in sorted(folders):
            fsync_directory(folder)
        return written

    def discard(self) -> None:
        """Remove every staged temp file; the lake is left as it was before this batch."""
        # After a failed commit some temp names are already renamed away: unlinking them finds nothing.
        while self._staged:
            _, staged = self._staged.popitem()
            self._drop(staged)

    def _stage(self, relative: str, path: Path, data: bytes) -> None:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        staged = _Staged(path, temp, data, fd)
        self._staged[relative] = staged
        self._open.append(staged)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, RECORD_FILE_MODE)
        except BaseException as exc:
            del self._staged[relative]
            self._drop(staged)
            if isinstance(exc, OSError) and exc.filename is None:
                exc.filename = temp  # a write to the descriptor names no file: the refusal names the lake folder
            raise
        if len(self._open) >= OPEN_FILES_BOUND:
            self._sync()

    def _sync(self) -> None:
        """fsync and close every staged file still open."""
        pending, self._open = self._open, []
        if not pending:
            return
        try:
            with ThreadPoolExecutor(max_workers=min(FSYNC_WORKERS, len(pending))) as pool:
                list(pool.map(os.fsync, [s.fd for s in pending if s.fd is not None]))
        finally:
            for s in pending:
                if s.fd is not None:
                    os.close(s.fd)
                    s.fd = None

    def _drop(self, staged: _Staged) -> None:
        if staged.fd is not None:
            self._open.remove(staged)
            os.close(staged.fd)
            staged.fd = None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staged.temp)
