"""Reading the evidence lake for a build: every record file, parsed with orjson and checked by the compiled
validator, in sorted path order; and the run manifests' "last seen" facts.

`evidence.lake.iter_lake` is the lake's reference reader; this is its bulk twin, answering the same question
(is this file a valid record at the path it sits at?) at a fraction of the cost: one `os.scandir` per folder,
containment checked per folder and for any file that is a symbolic link, and each record checked by
`evidence.validation.validate_record` (`jsonschema-rs`; `jsonschema` only names what is wrong in a file it
rejects).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final, NamedTuple

import orjson

from evidence.errors import NotRegularFile, RecordInvalidError
from evidence.files import MAX_MANIFEST_FILE_BYTES, read_opened, read_regular
from evidence.lake import RUNS_DIR
from evidence.records import (
    FILE_NAME_PATTERN,
    KINDS,
    REPOSITORY_FOLDER_PATTERN,
    content_hash,
    key_from_file_name,
    repository_folder,
)
from evidence.validation import validate_manifest, validate_record
from theurian.containment import resolve_inside
from theurian.errors import PathEscapeError
from theurian.project import REVIEW_DIR

# A record key is ASCII ([A-Za-z0-9_=-]); this maps each character to its bit of the case mask.
_MASK_BITS: Final = str.maketrans({**{chr(c): "1" for c in range(65, 91)}, **{
    ch: "0" for ch in "abcdefghijklmnopqrstuvwxyz0123456789_=-"}})


@dataclass(frozen=True)
class LakeFile:
    """One file as the build found it: `record` when valid, else `error` naming what is wrong."""

    record_path: str  # relative to .theurian/review/
    record: dict[str, Any] | None
    error: str | None
    content_sha256: str | None = None  # `sha256:<hex>` of the bytes read, for a valid record


@dataclass(frozen=True)
class LastSeen:
    run_id: str
    at: str


class LakeEntry(NamedTuple):
    """A file the scan found in a record kind folder, with the file type the scan read (no system call)."""

    folder: str  # the repository folder, sha256-<hex>
    kind: str
    name: str
    is_link: bool
    is_file: bool  # a regular file, not following a link

    @property
    def relative(self) -> str:
        return f"{self.folder}/{self.kind}/{self.name}"


def scan_lake(project_root: Path) -> tuple[list[LakeEntry], list[LakeFile]]:
    """Every file to read under `.theurian/review/`, sorted by path; and each folder that holds no records.

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
            for entry in sorted(os.scandir(kind.path), key=lambda e: e.name):
                if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                    continue  # a killed writer's leftover, never a record
                entries.append(LakeEntry(repo.name, kind.name, entry.name, entry.is_symlink(),
                                         entry.is_file(follow_symlinks=False)))
    return entries, problems


# A lake holds a handful of repositories and hashes each name once per record without this.
_folder_of: Final = lru_cache(maxsize=256)(repository_folder)


def _key(name: str) -> str | None:
    """`evidence.records.key_from_file_name`, with the case mask computed by one `str.translate` (the
    reference sums a generator per character, a measurable share of a 100,000-file build)."""
    match = FILE_NAME_PATTERN.fullmatch(name)
    if match is None:
        return None
    key: str = match["key"]
    bits = key.translate(_MASK_BITS)
    if not bits.isdigit() or len(bits) != len(key):  # a character outside the key alphabet: the reference decides
        return key_from_file_name(name)
    return key if format(int(bits[::-1], 2), "x") == match["mask"] else None


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
        PathEscapeError: it resolves outside the lake (`lake_path`): skipping it would publish a store without
            that repository's records over a good one.
    """
    return lake_path(root, relative).is_dir()


def read_entry(root: Path, entry: LakeEntry) -> LakeFile:
    """One scanned file of the resolved lake `root`, read and checked: the record, or what is wrong with it."""
    relative, folder, kind = entry.relative, entry.folder, entry.kind
    key = _key(entry.name)
    if key is None:
        return LakeFile(relative, None, "file name is not <recordKey>.<case mask>.json")
    try:
        data = read_regular(root, relative) if entry.is_link else _read_unlinked(f"{root}/{relative}", entry.is_file)
        record = orjson.loads(data)
    except NotRegularFile as exc:
        return LakeFile(relative, None, exc.reason)
    except (OSError, orjson.JSONDecodeError) as exc:
        return LakeFile(relative, None, f"unreadable: {type(exc).__name__}")
    if not isinstance(record, dict):
        return LakeFile(relative, None, "not a JSON object")
    try:
        validate_record(record, path=relative)
    except RecordInvalidError as exc:
        # The message leads with the path; the build's report names it already.
        return LakeFile(relative, None, exc.message.removeprefix(f"{relative}: "))
    same_place = _folder_of(record["repository"]) == folder
    if record["kind"] != kind or record["recordKey"] != key or not same_place:
        return LakeFile(relative, None, "repository, kind or key does not match the record's path")
    return LakeFile(relative, record, None, content_hash(data))


def _read_unlinked(path: str, is_file: bool) -> bytes:
    """The bytes of a scanned entry that is not a link: the scan's own file type rules out a folder, FIFO or
    device before any open, and `evidence.files.read_opened` does the rest.

    Raises:
        NotRegularFile: not a regular file (at the scan or at the open), or too large.
        OSError: the file system refused the read, or a link was swapped in since the scan (ELOOP).
    """
    if not is_file:
        raise NotRegularFile("not a regular file")
    return read_opened(path)


def last_seen(project_root: Path) -> tuple[dict[str, LastSeen], list[tuple[str, str]]]:
    """For each recordPath, the newest run that listed it; and every manifest that could not be read.

    A record's last-seen run is the newest manifest (run ids are ULIDs, so by name) whose `records` lists its
    `recordPath`; its time is that manifest's `startedAt`.
    """
    review = resolve_inside(project_root, REVIEW_DIR)
    folder = resolve_inside(project_root, f"{REVIEW_DIR}/{RUNS_DIR}")
    seen: dict[str, LastSeen] = {}
    bad: list[tuple[str, str]] = []
    if not folder.is_dir():
        return seen, bad
    names = sorted(e.name for e in os.scandir(folder) if e.name.endswith(".json") and e.name[0] != ".")
    for name in names:
        relative = f"{RUNS_DIR}/{name}"
        try:
            manifest = orjson.loads(read_regular(review, relative, MAX_MANIFEST_FILE_BYTES))
            validate_manifest(manifest, path=relative)
        except NotRegularFile as exc:
            bad.append((relative, exc.reason))
            continue
        except (OSError, orjson.JSONDecodeError) as exc:
            bad.append((relative, f"unreadable: {type(exc).__name__}"))
            continue
        except RecordInvalidError as exc:
            bad.append((relative, exc.message))
            continue
        mark = LastSeen(manifest["runId"], manifest["startedAt"])
        for listed in manifest["records"]:
            seen[listed["recordPath"]] = mark  # later (newer) runs overwrite earlier ones
    return seen, bad
