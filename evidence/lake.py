"""The evidence lake on disk: `.theurian/review/sha256-<hex>/<kind>/<key>.<mask>.json`, `runs/<runId>.json`.

Writes are durable (temp, fsync, replace, fsync directory) and idempotent: a record whose canonical bytes are
already on disk is not rewritten. Nothing here talks to the network; nothing here deletes a record. Every read
of record files and run manifests goes through the lake's one reader, `evidence.lake_read` and `lake_runs`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import orjson

from evidence.errors import EvidenceError, LakeBusyError, NotRegularFile
from evidence.lake_listing import RUNS_DIR, kind_entries
from evidence.lake_read import key_of, read_entry_bytes
from evidence.lake_runs import ManifestScan, read_manifests
from evidence.records import (
    KINDS,
    REPOSITORY_FOLDER_PATTERN,
    REPOSITORY_PATTERN,
    canonical_bytes,
    content_hash,
    key_from_file_name,
    record_file_name,
    repository_folder,
)
from evidence.validation import validate_manifest, validate_record
from theurian.containment import resolve_inside
from theurian.durable import fsync_directory, write_bytes_durably
from theurian.errors import PathEscapeError, TheurianError
from theurian.folder_lock import folder_held
from theurian.project import REVIEW_DIR


class Outcome(StrEnum):
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class PutResult:
    outcome: Outcome
    record_path: str
    sha256: str


@dataclass(frozen=True)
class PreparedRecord:
    """A validated record ready to store: its path (relative and resolved), canonical bytes, and the bytes its
    file holds now (None when there is no file)."""

    relative: str
    path: Path
    data: bytes
    existing: bytes | None

    @property
    def outcome(self) -> Outcome:
        if self.existing == self.data:
            return Outcome.UNCHANGED
        return Outcome.CREATED if self.existing is None else Outcome.UPDATED

    def result(self) -> PutResult:
        return PutResult(self.outcome, self.relative, content_hash(self.data))


def last_completed(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The newest completed run of `runs` (one repository's manifests, oldest first), or None."""
    completed = [m for m in runs if m["status"] == "completed"]
    return completed[-1] if completed else None


def _names_folder(repository: str, folder: str) -> bool:
    # An OWNER/NAME, never any text a file holds: the name is printed, and a folder can be named for anything.
    return REPOSITORY_PATTERN.fullmatch(repository) is not None and repository_folder(repository) == folder


class Lake:
    """One project's evidence lake. Every path is built from validated parts and resolved inside the root."""

    def __init__(self, project_root: Path) -> None:
        self.project_root = project_root

    def _resolve(self, relative: str) -> Path:
        return resolve_inside(self.project_root, f"{REVIEW_DIR}/{relative}" if relative else REVIEW_DIR)

    def _ensure_dir(self, relative: str) -> Path:
        path = self._resolve(relative)
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            fsync_directory(path.parent)
        return path

    @staticmethod
    def record_path(repository: str, kind: str, key: str) -> str:
        """The record's path relative to `.theurian/review/` (the `recordPath` a run manifest lists)."""
        if kind not in KINDS:
            raise EvidenceError(f"unknown record kind {kind!r}")
        return f"{repository_folder(repository)}/{kind}/{record_file_name(key)}"

    def load(self, repository: str, kind: str, key: str) -> dict[str, Any] | None:
        """The stored record, or None when there is none (or its file does not parse)."""
        path = self._resolve(self.record_path(repository, kind, key))
        try:
            document = orjson.loads(path.read_bytes())
        except (FileNotFoundError, orjson.JSONDecodeError):
            return None
        return document if isinstance(document, dict) else None

    def prepare(self, record: Mapping[str, Any]) -> PreparedRecord:
        """Validate a record and read what its file holds now, writing nothing but its folder.

        Raises:
            RecordInvalidError: the record does not validate.
            RecordKeyError: its key cannot name a file.
        """
        relative = self.record_path(record["repository"], record["kind"], record["recordKey"])
        validate_record(record, path=relative)
        data = canonical_bytes(record)
        self._ensure_dir(relative.rsplit("/", 1)[0])
        path = self._resolve(relative)
        try:
            existing: bytes | None = path.read_bytes()
        except FileNotFoundError:
            existing = None
        return PreparedRecord(relative, path, data, existing)

    def put(self, record: Mapping[str, Any]) -> PutResult:
        """Validate and durably store one record; unchanged bytes are left alone. A page of records is cheaper
        through `evidence.batch.RecordBatch`, which makes them durable together.

        Raises:
            RecordInvalidError: the record does not validate (nothing is written).
            RecordKeyError: its key cannot name a file.
        """
        prepared = self.prepare(record)
        if prepared.outcome is not Outcome.UNCHANGED:
            write_bytes_durably(prepared.path, prepared.data)
        return prepared.result()

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Hold this lake for one ingest: an exclusive, non-waiting `flock` on the lake folder itself.

        A second ingest of the same project would sweep the first one's staged temp files as a killed writer's
        leftovers (`sweep_temporary_files`) and fail it; it is refused instead, before it writes anything.

        Raises:
            LakeBusyError: another process holds the lake.
        """
        with contextlib.ExitStack() as held:
            try:
                held.enter_context(folder_held(self._ensure_dir(""), wait=False))
            except BlockingIOError:
                raise LakeBusyError(
                    f"another `theurian review ingest` is writing {REVIEW_DIR} of this project; wait for it to "
                    "end, then run this one again (nothing was fetched or written)"
                ) from None
            yield

    def sweep_temporary_files(self, repository: str) -> int:
        """Remove temp files a killed writer left in a repository's folders and `runs/`; return how many."""
        removed = 0
        folders = [f"{repository_folder(repository)}/{kind}" for kind in KINDS] + [RUNS_DIR]
        for relative in folders:
            folder = self._resolve(relative)
            if not folder.is_dir():
                continue
            for entry in folder.iterdir():
                if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                    with contextlib.suppress(FileNotFoundError):
                        entry.unlink()
                        removed += 1
        return removed

    def write_manifest(self, manifest: Mapping[str, Any], *, entries_checked: int = 0) -> str:
        """Validate and durably write `runs/<runId>.json`; return its relative path.

        `entries_checked`: leading `records` entries already validated by an earlier write of this manifest.
        """
        relative = f"{RUNS_DIR}/{manifest['runId']}.json"
        validate_manifest(manifest, path=relative, entries_checked=entries_checked)
        self._ensure_dir(RUNS_DIR)
        write_bytes_durably(self._resolve(relative), canonical_bytes(manifest))
        return relative

    def manifests(self) -> list[dict[str, Any]]:
        """Every readable, valid run manifest, oldest run first (run ids are ULIDs)."""
        return self.scan_manifests().manifests

    def scan_manifests(self) -> ManifestScan:
        """Every readable, valid run manifest, oldest run first, and the `runs/` entries skipped
        (`evidence.lake_runs.read_manifests`, the one reader the build and `review status` share)."""
        return read_manifests(self.project_root)

    def repository_runs(self, repository: str,
                        manifests: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """Every readable, valid run manifest of one repository (any spelling), oldest run first; of `manifests`
        (the lake's, already read) when given."""
        folder = repository_folder(repository)
        return [m for m in (self.manifests() if manifests is None else manifests) if m["repositoryFolder"] == folder]

    def last_completed_run(self, repository: str) -> dict[str, Any] | None:
        return last_completed(self.repository_runs(repository))

    def record_keys(self, repository: str, kind: str) -> list[str]:
        """Keys of the records of one kind stored for a repository, sorted (read from file names)."""
        folder = self._resolve(f"{repository_folder(repository)}/{kind}")
        if not folder.is_dir():
            return []
        return sorted(key for e in folder.iterdir() if (key := key_from_file_name(e.name)) is not None)

    def record_counts(self, repository: str) -> dict[str, int]:
        """Record files per kind for one repository (counted by name, not parsed)."""
        return self.folder_record_counts(repository_folder(repository))

    def folder_record_counts(self, folder: str, unreadable: list[str] | None = None) -> dict[str, int]:
        """Record files per kind in one repository folder (`sha256-<hex>`), counted by name, not parsed. A kind
        folder that cannot be listed (linked out of the lake, not a folder, permission denied) counts 0 and is
        named in `unreadable`, project-relative."""
        counts = {}
        root = self._resolve("")
        for kind in KINDS:
            try:
                names = [entry.name for entry in kind_entries(root, folder, kind)]
            except (TheurianError, OSError):
                names = []
                if unreadable is not None:
                    unreadable.append(f"{REVIEW_DIR}/{folder}/{kind}")
            counts[kind] = sum(1 for name in names if key_from_file_name(name))
        return counts

    def repository_folders(self, unreadable: list[str] | None = None) -> list[str]:
        """The repository folders (`sha256-<hex>`) the lake holds, sorted: each a folder inside the lake, as
        `review build` reads them (a link to a folder inside the lake counts; the ingest makes none). An entry
        named like one that is not (a link out of the lake, a file) is named in `unreadable`, project-relative:
        `review build` refuses a lake where one is linked out, so status must show it."""
        root = self._resolve("")
        if not root.is_dir():
            return []
        folders = []
        for entry in sorted(os.scandir(root), key=lambda e: e.name):
            if not REPOSITORY_FOLDER_PATTERN.fullmatch(entry.name):
                continue
            try:
                is_folder = resolve_inside(root, entry.name).is_dir()
            except PathEscapeError:
                is_folder = False
            if is_folder:
                folders.append(entry.name)
            elif unreadable is not None:
                unreadable.append(f"{REVIEW_DIR}/{entry.name}")
        return folders

    def repository_named_in(self, folder: str) -> str | None:
        """The OWNER/NAME a repository folder holds records of: the first record file (in name order) that reads
        as a record naming a repository whose folder this is; None when none does."""
        root = self._resolve("")
        for kind in KINDS:
            try:
                entries = kind_entries(root, folder, kind)
            except (TheurianError, OSError):  # linked out of the lake, or unreadable: names nothing
                continue
            for entry in entries:
                if key_of(entry.name) is None:
                    continue
                try:
                    record = orjson.loads(read_entry_bytes(root, entry))
                except (NotRegularFile, OSError, orjson.JSONDecodeError):
                    continue
                repository = record.get("repository") if isinstance(record, dict) else None
                if isinstance(repository, str) and _names_folder(repository, folder):
                    return repository
        return None
