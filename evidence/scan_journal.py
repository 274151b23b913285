"""The journal of a `review scan`: the hash of each record it rewrites, written down before the record is replaced.

Its one owner: where it is (`.theurian/state/review-scan.journal`), how an entry is written and read, and what
an entry left by a stopped scan vouches for (`evidence.lake_scan` writes and takes it over; `evidence.lake_damage`
names a record it vouches for as a stopped scan's, whose cure is the next scan, not a full ingest).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import orjson

from evidence.files import read_regular
from evidence.records import content_hash
from theurian.containment import resolve_inside
from theurian.errors import TheurianError
from theurian.project import SCAN_JOURNAL_NAME, STATE_DIR


def journal_path(project_root: Path) -> Path:
    return resolve_inside(project_root, f"{STATE_DIR}/{SCAN_JOURNAL_NAME}")


def journalled(path: Path) -> dict[str, str]:
    """Record path -> the hash a scan wrote down for it, from the journal at `path` (empty when there is none)."""
    try:
        lines = path.read_bytes().splitlines()
    except FileNotFoundError:
        return {}
    entries: dict[str, str] = {}
    for line in lines:
        try:
            entry = orjson.loads(line)
            entries[str(entry["recordPath"])] = str(entry["sha256"])
        except (orjson.JSONDecodeError, KeyError, TypeError):
            continue  # the line a stop cut short: its record was not replaced yet
    return entries


class ScanJournal:
    """The hash of each record a scan rewrites, written down (durably) before the record is replaced: the run
    manifests learn the new hashes only at the scan's end, so without it a scan stopped part way left each record
    it had rewritten reading as damage (its bytes not the ones its run recorded), and a second scan, finding them
    already screened, rewrote none of them to record it. The next scan takes over every entry whose file still
    holds exactly those bytes; an entry whose file changed since (or was never replaced) is no evidence of
    anything and is dropped."""

    def __init__(self, project_root: Path) -> None:
        self.path = journal_path(project_root)
        self._handle: Any = None

    def still_written(self, review: Path) -> dict[str, str]:
        """Record path -> hash for each entry an earlier, interrupted scan left whose file holds those bytes."""
        found: dict[str, str] = {}
        for path, digest in journalled(self.path).items():
            try:
                resolve_inside(review, path)  # a path out of the lake is no record of it
                held = content_hash(read_regular(review, path))  # a regular file, bounded
            except (OSError, TheurianError):
                continue
            if held == digest:
                found[path] = digest
        return found

    def note(self, relative: str, digest: str) -> None:
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.path, "ab")  # held for the scan's loop, closed after it (`close`)
        self._handle.write(orjson.dumps({"recordPath": relative, "sha256": digest}) + b"\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
