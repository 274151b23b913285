"""The one reader of the evidence lake: record files and run manifests, as `review build`, `review scan`,
`review status` and the knowledge candidate read them.

Record files. `scan_records` lists the files under `.theurian/review/`: one `os.scandir` per folder, sorted by
name, with the file type the scan holds (no system call per file; an `lstat` relative to the folder's descriptor
where identities are asked for), containment checked per folder (a folder
resolving out of the lake raises: skipping it would publish a store without that repository over a good one).
`read_entry` reads and checks one: a regular file only (`evidence.files`), orjson, the compiled validator
(`evidence.fast_check`; `jsonschema` only names the fault), at the place its repository, kind and key say. A bad
file comes back with its reason, never raised. `iter_records` is the two together, in sorted path order.

Run manifests are read by `evidence.lake_runs`, the same way.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import groupby
from pathlib import Path
from typing import Any, Final, NamedTuple

import orjson

from evidence.errors import NotRegularFile, RecordInvalidError
from evidence.files import read_opened, read_regular
from evidence.records import (
    FILE_NAME_PATTERN,
    KINDS,
    REPOSITORY_FOLDER_PATTERN,
    content_hash,
    key_from_file_name,
    repository_folder,
)
from evidence.validation import validate_record
from theurian.containment import resolve_inside
from theurian.errors import PathEscapeError
from theurian.project import REVIEW_DIR

RUNS_DIR: Final = "runs"  # run manifests, beside the repository folders
_FOLDER_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# A record key is ASCII ([A-Za-z0-9_=-], FILE_NAME_PATTERN's own classes): this maps each of its bytes to its bit
# of the case mask, "1" for A-Z and "0" for the rest.
_MASK_BITS: Final = bytes(0x31 if 65 <= byte <= 90 else 0x30 for byte in range(256))

# (device, inode, size, mtime ns, ctime ns) of a record file as a scan saw it, not following a link.
FileIdentity = tuple[int, int, int, int, int]


class LakeFile(NamedTuple):
    """One file as the reader found it: `record` when valid, else `error` naming what is wrong. (A tuple: a build
    makes one a file, and a frozen dataclass cost a microsecond more each.)"""

    record_path: str  # relative to .theurian/review/
    record: dict[str, Any] | None
    error: str | None
    content_sha256: str | None = None  # `sha256:<hex>` of the bytes read, for a valid record


class LakeEntry(NamedTuple):
    """A file the scan found in a record kind folder, with the file type the scan read (no system call)."""

    folder: str  # the repository folder, sha256-<hex>
    kind: str
    name: str
    is_link: bool
    is_file: bool  # a regular file, not following a link
    identity: FileIdentity | None = None  # only when the scan was asked for identities

    @property
    def relative(self) -> str:
        return f"{self.folder}/{self.kind}/{self.name}"


def scan_records(project_root: Path, *, identities: bool = False) -> tuple[list[LakeEntry], list[LakeFile]]:
    """Every file to read under `.theurian/review/`, sorted by path; and each folder that holds no records.

    `identities`: also `lstat` each file (one system call a file) for its `FileIdentity`, which an incremental
    build compares with the one it recorded.

    Raises:
        PathEscapeError: `.theurian/review`, or a repository or kind folder in it, resolves outside the lake.
    """
    root = resolve_inside(project_root, REVIEW_DIR)
    entries: list[LakeEntry] = []
    problems: list[LakeFile] = []
    if not root.is_dir():
        return entries, problems
    for repo in sorted(os.scandir(root), key=lambda e: e.name):
        if repo.name == RUNS_DIR or repo.name.startswith("."):
            continue
        if not REPOSITORY_FOLDER_PATTERN.fullmatch(repo.name) or not _contained_dir(root, repo.name):
            problems.append(LakeFile(repo.name, None, "not a repository folder (sha256-<hex>)"))
            continue
        for kind in sorted(os.scandir(repo.path), key=lambda e: e.name):
            relative = f"{repo.name}/{kind.name}"
            if kind.name not in KINDS or not _contained_dir(root, relative):
                problems.append(LakeFile(relative, None, "not a record kind folder"))
                continue
            entries += _kind_entries(repo.name, kind.name, kind.path, identities)
    return entries, problems


def _kind_entries(folder: str, kind: str, path: str, identities: bool) -> list[LakeEntry]:
    # Listed through a descriptor of the folder, so each file's `lstat` is an `fstatat` of its bare name: the
    # kernel walks one component instead of the whole path from `/` (15 % of the scan's stat time at 50,000 files
    # under /tmp, more under a deeper project). Opening follows a link at the kind folder as `scandir(path)` did;
    # its containment was checked before.
    descriptor = os.open(path, _FOLDER_FLAGS)
    try:
        return _identified(folder, kind, descriptor) if identities else _typed(folder, kind, descriptor)
    finally:
        os.close(descriptor)


def _is_leftover(name: str) -> bool:
    return name.startswith(".") and name.endswith(".tmp")  # a killed writer's leftover, never a record


def _typed(folder: str, kind: str, descriptor: int) -> list[LakeEntry]:
    """The folder's files with the type the listing gives (`d_type`: no system call a file)."""
    return [LakeEntry(folder, kind, entry.name, entry.is_symlink(), entry.is_file(follow_symlinks=False))
            for entry in sorted(os.scandir(descriptor), key=lambda e: e.name) if not _is_leftover(entry.name)]


def _identified(folder: str, kind: str, descriptor: int) -> list[LakeEntry]:
    """The folder's files with their identities: the names alone listed (`listdir`, no `DirEntry` a file), and
    the type taken from the `lstat` each file needs anyway (14 % less CPU at 100,000 files than `scandir`)."""
    found = []
    for name in sorted(os.listdir(descriptor)):
        if _is_leftover(name):
            continue
        try:
            status = os.lstat(name, dir_fd=descriptor)
        except OSError:
            # Gone or refused since the listing: taken as a plain file, so the read says which (its open fails).
            found.append(LakeEntry(folder, kind, name, False, True))
            continue
        mode = status.st_mode
        found.append(LakeEntry(folder, kind, name, stat.S_ISLNK(mode), stat.S_ISREG(mode), (
            status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)))
    return found


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


def lake_path(lake: Path, relative: str) -> Path:
    """`relative` resolved inside the resolved lake `lake`.

    Raises:
        PathEscapeError: it resolves outside the lake, named project-relative (`.theurian/review/...`), so the
            refusal carries the cure for source rather than for derived state.
    """
    try:
        return resolve_inside(lake, relative)
    except PathEscapeError as exc:
        raise PathEscapeError(exc.message, relative=f"{REVIEW_DIR}/{exc.relative}") from None


def _contained_dir(root: Path, relative: str) -> bool:
    """Whether the lake's `relative` is a folder (a link to one inside the lake included).

    Raises:
        PathEscapeError: it resolves outside the lake (`lake_path`).
    """
    return lake_path(root, relative).is_dir()


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
            descriptor: int | None = os.open(f"{root}/{folder}/{kind}", _FOLDER_FLAGS)
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


def kind_entries(root: Path, folder: str, kind: str) -> list[LakeEntry]:
    """The files of one kind folder of the resolved lake `root`, as `scan_records` lists them (none if absent).

    Raises:
        PathEscapeError: the kind folder resolves outside the lake (`lake_path`).
        OSError: it cannot be listed.
    """
    if not lake_path(root, f"{folder}/{kind}").is_dir():
        return []
    return _kind_entries(folder, kind, f"{root}/{folder}/{kind}", False)


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
