"""The one reader of the evidence lake: record files and run manifests, as `review build`, `review scan`,
`review status` and the knowledge candidate read them.

Record files, as `evidence.lake_listing` lists them. `read_entry` reads and checks one: a regular file only
(`evidence.files`), orjson, the compiled validator (`evidence.fast_check`; `jsonschema` only names the fault), at
the place its repository, kind and key say. A bad file comes back with its reason, never raised. `read_entries`
reads a scan's files the same way a batch at a time; `iter_records` is the listing and the reading together, in
sorted path order.

Run manifests are read by `evidence.lake_runs`, the same way.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import groupby
from pathlib import Path
from typing import Final

import orjson

from evidence.errors import NotRegularFile, RecordInvalidError
from evidence.files import read_opened, read_regular
from evidence.lake_listing import FOLDER_FLAGS, LakeEntry, LakeFile, lake_path, scan_records
from evidence.records import FILE_NAME_PATTERN, content_hash, key_from_file_name, repository_folder
from evidence.validation import validate_record
from theurian.containment import resolve_inside
from theurian.project import REVIEW_DIR

# A record key is ASCII ([A-Za-z0-9_=-], FILE_NAME_PATTERN's own classes): this maps each of its bytes to its bit
# of the case mask, "1" for A-Z and "0" for the rest.
_MASK_BITS: Final = bytes(0x31 if 65 <= byte <= 90 else 0x30 for byte in range(256))


def iter_records(project_root: Path) -> Iterator[LakeFile]:
    """Every file of the lake read and checked (`read_entry`), with every folder holding no records, in sorted
    path order.

    Raises:
        PathEscapeError: see `scan_records`.
    """
    entries, problems = scan_records(project_root)
    root = resolve_inside(project_root, REVIEW_DIR)
    found = problems + list(read_entries(root, entries))
    yield from sorted(found, key=lambda item: item.record_path)


# A lake holds a handful of repositories and hashes each name once per record without this.
_folder_of: Final = lru_cache(maxsize=256)(repository_folder)


def key_of(name: str) -> str | None:
    """`evidence.records.key_from_file_name`, with the case mask computed by one `bytes.translate` (the
    reference sums a generator per character, a measurable share of a 100,000-file build)."""
    match = FILE_NAME_PATTERN.fullmatch(name)
    if match is None:
        return None
    key: str = match["key"]
    if not key.isascii():  # never, by the pattern's classes; the reference decides should they ever change
        return key_from_file_name(name)
    # One byte table lookup a character (a str table looks each up in a dict).
    return key if format(int(key.encode("ascii").translate(_MASK_BITS)[::-1], 2), "x") == match["mask"] else None


def read_entry(root: Path, entry: LakeEntry) -> LakeFile:
    """One scanned file of the resolved lake `root`, read and checked: the record, or what is wrong with it."""
    return _checked(entry.folder, entry.kind, _read_some(root, iter([entry]), None))[0]


def read_entries(root: Path, entries: Iterable[LakeEntry]) -> Iterator[LakeFile]:
    """`read_entry` of each of `entries` in turn, the same answers, at about two thirds of its cost a file.

    Each kind folder is opened once for the run of its files that follow one another (the scan's order), and each
    file opened by its bare name in it, so the kernel walks one component a file rather than the whole path (a
    folder that cannot be opened any more has its files read by path, where each open fails as it would have).
    Files are read a batch at a time (READ_BATCH_FILES, or READ_BATCH_BYTES in all), then parsed, then checked,
    each step over the whole batch: the system calls of a read evict what the parse and the check had in the CPU's
    caches, so interleaving them per file cost a fifth more (measured: docs/review-search.md)."""
    for (folder, kind), run in groupby(entries, key=_folder_and_kind):
        try:
            descriptor: int | None = os.open(f"{root}/{folder}/{kind}", FOLDER_FLAGS)
        except OSError:
            descriptor = None
        try:
            while batch := _read_some(root, run, descriptor):
                yield from _checked(folder, kind, batch)
        finally:
            if descriptor is not None:
                os.close(descriptor)


def _folder_and_kind(entry: LakeEntry) -> tuple[str, str]:
    return entry.folder, entry.kind


# What is read before any of it is parsed: enough files to keep each step's work in the caches, few enough bytes
# that a batch of large files holds no more than a few MiB.
READ_BATCH_FILES: Final = 64
READ_BATCH_BYTES: Final = 4 * 1024 * 1024

_Read = tuple[str, str | None, bytes | LakeFile]  # (relative path, record key, its bytes or why it was not read)


def _read_some(root: Path, run: Iterator[LakeEntry], descriptor: int | None) -> list[_Read]:
    """The next files of `run` (one kind folder's, `descriptor` open on it or None), read: a batch, or [] at the
    end."""
    batch: list[_Read] = []
    size = 0
    for entry in run:
        relative = f"{entry.folder}/{entry.kind}/{entry.name}"
        key = key_of(entry.name)
        if key is None:
            batch.append((relative, None, LakeFile(relative, None, "file name is not <recordKey>.<case mask>.json")))
        else:
            data = _bytes_of(root, entry, relative, descriptor)
            size += len(data) if type(data) is bytes else 0
            batch.append((relative, key, data))
        if len(batch) >= READ_BATCH_FILES or size >= READ_BATCH_BYTES:
            break
    return batch


def _bytes_of(root: Path, entry: LakeEntry, relative: str, descriptor: int | None) -> bytes | LakeFile:
    """The file's bytes (`_entry_bytes`), or why they were not read."""
    try:
        return _entry_bytes(root, entry, relative, descriptor)
    except NotRegularFile as exc:
        return LakeFile(relative, None, exc.reason)
    except OSError as exc:
        return LakeFile(relative, None, f"unreadable: {type(exc).__name__}")


def _checked(folder: str, kind: str, batch: list[_Read]) -> list[LakeFile]:
    """A batch of one kind folder's files read by `_read_some`, parsed (the whole batch) and then checked."""
    parsed = [data if isinstance(data, LakeFile) else _parsed(relative, data) for relative, _, data in batch]
    return [found if isinstance(found, LakeFile) else _verdict(relative, folder, kind, key, data, found)
            for (relative, key, data), found in zip(batch, parsed, strict=True)]


def _parsed(relative: str, data: bytes) -> object:
    """The JSON value of a file's bytes, or a LakeFile saying it is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return LakeFile(relative, None, f"unreadable: {type(exc).__name__}")


def _verdict(relative: str, folder: str, kind: str, key: str | None, data: bytes | LakeFile, record: object,
             ) -> LakeFile:
    """A parsed file checked: a valid record of this very place, or what is wrong with it."""
    if type(record) is not dict:  # orjson makes a JSON object a dict, never a subclass of one
        return LakeFile(relative, None, "not a JSON object")
    try:
        validate_record(record, path=relative)
    except RecordInvalidError as exc:
        # The message leads with the path; the caller's report names it already.
        return LakeFile(relative, None, exc.message.removeprefix(f"{relative}: "))
    if record["kind"] != kind or record["recordKey"] != key or _folder_of(record["repository"]) != folder:
        return LakeFile(relative, None, "repository, kind or key does not match the record's path")
    assert type(data) is bytes  # a parsed file was read
    return LakeFile(relative, record, None, content_hash(data))


def read_entry_bytes(root: Path, entry: LakeEntry) -> bytes:
    """The bytes of one scanned file, read as `read_entry` reads them (what `review status` counts in).

    Raises:
        NotRegularFile: not a regular file inside the lake, or too large.
        OSError: the file system refused the read.
    """
    return _entry_bytes(root, entry, entry.relative, None)


def _entry_bytes(root: Path, entry: LakeEntry, relative: str, descriptor: int | None) -> bytes:
    """The bytes of a scanned file at `relative`: a link resolved and checked inside the lake (`read_regular`);
    otherwise the scan's own file type rules out a folder, FIFO or device before any open, and `read_opened` does
    the rest, opening the bare name in `descriptor` (its kind folder's) when given.

    Raises:
        NotRegularFile: not a regular file (at the scan or at the open), or too large.
        OSError: the file system refused the read, or a link was swapped in since the scan (ELOOP).
    """
    if entry.is_link:
        return read_regular(root, relative)
    if not entry.is_file:
        raise NotRegularFile("not a regular file")
    return read_opened(f"{root}/{relative}") if descriptor is None else read_opened(entry.name, dir_fd=descriptor)


def read_record_file(lake: Path, record_path: str) -> bytes:
    """The bytes of the record file at `record_path` (relative to the resolved lake `lake`, as a store row names
    it), resolved inside the lake and read as a build reads it (a regular file only, never waited on, bounded):
    how the knowledge candidate reads a file the review store vouches for.

    Raises:
        PathEscapeError: it resolves outside the lake (`lake_path`: named project-relative, the cure for source).
        NotRegularFile: not a regular file, or too large.
        OSError: the file system refused the read.
    """
    return read_opened(lake_path(lake, record_path))
