"""The lake's run manifests, read by the lake's one reader's rules (`evidence.lake_read`): `read_manifests` reads
every `runs/*.json` that is a regular file inside the lake and a valid manifest, oldest run first (run ids are
ULIDs); every other entry is skipped with its reason, and those that could not be read at all are named
project-relative, as `review status` shows them. `last_seen` dates each record path by the newest run listing it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
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
    review = resolve_inside(project_root, REVIEW_DIR)
    folder = resolve_inside(project_root, f"{REVIEW_DIR}/{RUNS_DIR}")
    found: list[dict[str, Any]] = []
    skipped: list[tuple[str, str]] = []
    unreadable: list[str] = []
    if not folder.is_dir():
        return ManifestScan(found, skipped, unreadable)
    names = sorted(e.name for e in os.scandir(folder) if e.name.endswith(".json") and e.name[0] != ".")
    for name in names:
        relative = f"{RUNS_DIR}/{name}"
        try:
            data = read_regular(review, relative, MAX_MANIFEST_FILE_BYTES)
        except NotRegularFile as exc:
            skipped.append((relative, exc.reason))
            unreadable.append(f"{REVIEW_DIR}/{relative}")
            continue
        except OSError as exc:
            skipped.append((relative, f"unreadable: {type(exc).__name__}"))
            unreadable.append(f"{REVIEW_DIR}/{relative}")
            continue
        try:
            manifest = orjson.loads(data)
            validate_manifest(manifest, path=relative)
        except orjson.JSONDecodeError as exc:
            skipped.append((relative, f"unreadable: {type(exc).__name__}"))
            continue
        except RecordInvalidError as exc:
            skipped.append((relative, exc.message))
            continue
        found.append(manifest)
    return ManifestScan(found, skipped, unreadable)


def last_seen(manifests: Sequence[dict[str, Any]]) -> dict[str, LastSeen]:
    """For each recordPath, the newest of `manifests` (given oldest first) that lists it: its run and `startedAt`."""
    seen: dict[str, LastSeen] = {}
    for manifest in manifests:
        mark = LastSeen(manifest["runId"], manifest["startedAt"])
        for listed in manifest["records"]:
            seen[listed["recordPath"]] = mark  # later (newer) runs overwrite earlier ones
    return seen
