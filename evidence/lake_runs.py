"""The lake's run manifests, read by the lake's one reader's rules (`evidence.lake_read`): `read_manifests` reads
every `runs/*.json` that is a regular file inside the lake and a valid manifest, oldest run first (run ids are
ULIDs); every other entry is skipped with its reason, and those that could not be read at all are named
project-relative, as `review status` shows them. `newest_manifests` gives the same manifests newest first, read one
at a time. `last_seen` dates each record path by the newest run listing it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from evidence.errors import NotRegularFile, RecordInvalidError
from evidence.files import MAX_MANIFEST_FILE_BYTES, read_regular
from evidence.lake_listing import RUNS_DIR
from evidence.validation import validate_manifest
from theurian.containment import resolve_inside
from theurian.project import REVIEW_DIR


@dataclass(frozen=True)
class LastSeen:
    run_id: str
    at: str


@dataclass(frozen=True)
class ManifestScan:
    """What `runs/` holds: every readable, valid manifest (oldest run first); every `*.json` entry skipped, with
    why (paths relative to `.theurian/review/`); and, project-relative, those of them that could not be read at
    all: not a regular file inside the lake (a directory, a FIFO or other special file, a symlink leading out of
    the lake or nowhere), or refused by the file system."""

    manifests: list[dict[str, Any]]
    skipped: list[tuple[str, str]]
    unreadable: list[str]


def read_manifests(project_root: Path) -> ManifestScan:
    """Every run manifest of the lake, read as `ManifestScan` says. Only regular files inside the lake are read
    (SEC-7): an entry that is a directory, a FIFO, a link out of the lake is skipped and named, never opened or
    trusted.

    Raises:
        PathEscapeError: `.theurian/review` or its `runs` folder resolves outside the project.
    """
    found: list[dict[str, Any]] = []
    skipped: list[tuple[str, str]] = []
    unreadable: list[str] = []
    review, names = _manifest_names(project_root)
    for name in names:
        read = _read_manifest(review, name)
        if isinstance(read, _Skipped):
            skipped.append((read.relative, read.reason))
            if read.unreadable:
                unreadable.append(f"{REVIEW_DIR}/{read.relative}")
        else:
            found.append(read)
    return ManifestScan(found, skipped, unreadable)


def newest_manifests(project_root: Path) -> Iterator[dict[str, Any]]:
    """The valid run manifests `read_manifests` gives, newest run first, each file read only when the iteration
    reaches it: a question answered by the newest manifest that says something (which salt keyed the lake, a
    repository's last completed run) stops before the old ones, whose `records` lists are what cost (the first full
    run of a large repository lists every record it wrote).

    Raises:
        PathEscapeError: `.theurian/review` or its `runs` folder resolves outside the project.
    """
    review, names = _manifest_names(project_root)
    for name in reversed(names):  # run ids are ULIDs: the names sort oldest first
        read = _read_manifest(review, name)
        if not isinstance(read, _Skipped):
            yield read


@dataclass(frozen=True)
class _Skipped:
    relative: str  # to `.theurian/review/`
    reason: str
    unreadable: bool  # not read at all (not a regular file inside the lake, or refused), as against invalid


def _manifest_names(project_root: Path) -> tuple[Path, list[str]]:
    """The lake's folder and the `runs/*.json` names in it, sorted (none when there is no `runs` folder)."""
    review = resolve_inside(project_root, REVIEW_DIR)
    folder = resolve_inside(project_root, f"{REVIEW_DIR}/{RUNS_DIR}")
    if not folder.is_dir():
        return review, []
    return review, sorted(e.name for e in os.scandir(folder) if e.name.endswith(".json") and e.name[0] != ".")


def _read_manifest(review: Path, name: str) -> dict[str, Any] | _Skipped:
    """The manifest `runs/NAME` holds, validated, or why it is skipped."""
    relative = f"{RUNS_DIR}/{name}"
    try:
        data = read_regular(review, relative, MAX_MANIFEST_FILE_BYTES)
    except NotRegularFile as exc:
        return _Skipped(relative, exc.reason, unreadable=True)
    except OSError as exc:
        return _Skipped(relative, f"unreadable: {type(exc).__name__}", unreadable=True)
    try:
        manifest = orjson.loads(data)
        validate_manifest(manifest, path=relative)
    except orjson.JSONDecodeError as exc:
        return _Skipped(relative, f"unreadable: {type(exc).__name__}", unreadable=False)
    except RecordInvalidError as exc:
        return _Skipped(relative, exc.message, unreadable=False)
    result: dict[str, Any] = manifest
    return result


def last_seen(manifests: Sequence[dict[str, Any]]) -> dict[str, LastSeen]:
    """For each recordPath, the newest of `manifests` (given oldest first) that lists it: its run and `startedAt`."""
    seen: dict[str, LastSeen] = {}
    for manifest in manifests:
        mark = LastSeen(manifest["runId"], manifest["startedAt"])
        for listed in manifest["records"]:
            seen[listed["recordPath"]] = mark  # later (newer) runs overwrite earlier ones
    return seen
