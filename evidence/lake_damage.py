"""Which files of the evidence lake are damaged, as `theurian doctor` and `review status` name them, with the
command that mends each.

Damaged means one of: a record file the lake's one reader refuses (`evidence.lake_read`: truncated, not JSON,
not its schema, not at the place its path says, not a regular file); a valid record file whose bytes are not
those the newest run manifest listing it recorded (`records[].sha256`: edited since the run wrote it); a
`runs/*.json` the manifest reader skips (`evidence.lake_runs`). A file no manifest lists (a lake from before
manifests, or copied in) has no recorded hash to differ from; a listed file that is absent is not damage (removing
a record file is the documented cure for leaked content).

Cheap on a large lake: a caller that holds hashes it can vouch for — the review store's, for the files whose
identity its build recorded (`projection.review_reuse`) — has those files judged by the stored hash, read from
nothing; only the files changed since that build, or never stored (the build skipped them), are read: on a lake
the last build read whole, no file at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from evidence.lake_listing import FileIdentity, LakeEntry, scan_records
from evidence.lake_read import read_entries
from evidence.lake_runs import ManifestScan
from evidence.scan_journal import journal_path, journalled
from theurian.containment import resolve_inside
from theurian.project import REVIEW_DIR
from theurian.text import shell_word

# Why a valid record file is damaged when its bytes are not the ones its run recorded.
NOT_AS_RECORDED: Final = "edited since the newest run listing it wrote it: its sha256 is not the one that run recorded"
# Not as recorded because a `review scan` rewrote it and was stopped before the manifests recorded the new bytes:
# its journal vouches for exactly these, and the next scan records them (`evidence.scan_journal`).
SCAN_STOPPED: Final = ("rewritten by a `review scan` that was stopped before it recorded the new bytes: the next "
                       "scan records them")


@dataclass(frozen=True)
class Damage:
    """One damaged file: project-relative, why, and the repository folder of a record file (None: a manifest)."""

    path: str
    reason: str
    folder: str | None = None


def recorded_hashes(manifests: Sequence[dict[str, Any]]) -> dict[str, str]:
    """For each recordPath, the sha256 the newest of `manifests` (given oldest first) listing it recorded."""
    hashes: dict[str, str] = {}
    for manifest in manifests:
        for listed in manifest["records"]:
            hashes[listed["recordPath"]] = listed["sha256"]  # later (newer) runs overwrite earlier ones
    return hashes


def damaged_manifests(scan: ManifestScan) -> list[Damage]:
    """Every `runs/` entry the manifest reader skipped, with its reason."""
    return [Damage(f"{REVIEW_DIR}/{relative}", why) for relative, why in scan.skipped]


def damaged_records(project_root: Path, manifests: Sequence[dict[str, Any]], *,
                    entries: Sequence[LakeEntry] | None = None,
                    vouched: Mapping[str, tuple[FileIdentity, str]] | None = None) -> list[Damage]:
    """Every damaged record file of the lake, in path order.

    `entries`: the lake's listing with identities (`scan_records(identities=True)`), when the caller made it.
    `vouched`: record path -> (the file's identity, the content hash) a reader the caller trusts read from it: a
    file whose identity is still that one is judged by that hash, unread (an identity, not an mtime: a file
    replaced by one carrying an old mtime has a new inode and ctime).

    Raises:
        PathEscapeError: see `scan_records`.
        OSError: the lake cannot be listed.
    """
    listed = entries if entries is not None else scan_records(project_root, identities=vouched is not None)[0]
    recorded = recorded_hashes(manifests)
    journal: dict[str, str] | None = None  # read at the first file not as recorded, if any

    def not_as_recorded(relative: str, held: str | None) -> str:
        nonlocal journal
        if journal is None:
            journal = journalled(journal_path(project_root))
        return SCAN_STOPPED if journal.get(relative) == held else NOT_AS_RECORDED

    known = vouched or {}
    damage: list[Damage] = []
    unread: list[LakeEntry] = []
    for entry in listed:
        relative = entry.relative
        held = known.get(relative)
        if held is None or entry.is_link or entry.identity != held[0]:
            unread.append(entry)
        elif recorded.get(relative, held[1]) != held[1]:
            damage.append(Damage(f"{REVIEW_DIR}/{relative}", not_as_recorded(relative, held[1]), entry.folder))
    lake = resolve_inside(project_root, REVIEW_DIR)
    for found in read_entries(lake, unread):
        why = found.error if found.record is None else (
            not_as_recorded(found.record_path, found.content_sha256)
            if recorded.get(found.record_path, found.content_sha256) != found.content_sha256 else None)
        if why is not None:
            damage.append(Damage(f"{REVIEW_DIR}/{found.record_path}", why, found.record_path.split("/", 1)[0]))
    return sorted(damage, key=lambda item: item.path)


def scan_cure(project_root: Path) -> str:
    """The command that mends a record a stopped `review scan` rewrote (`SCAN_STOPPED`)."""
    return f"`theurian review scan --project {shell_word(str(project_root))}`"


def record_cure(repository: str | None, project_root: Path, *, allowlisted: bool) -> str:
    """The command that mends a damaged record file of `repository` (None: no record or manifest names it)."""
    project = f" --project {shell_word(str(project_root))}"
    if repository is None:
        return ("remove it (no run or record names its repository, so nothing can fetch it again), then "
                f"`theurian review build{project}`")
    allow = "" if allowlisted else f"`theurian review allow {repository}{project}`, then "
    return (f"{allow}`theurian review ingest --full {repository}{project}` fetches it again, then "
            f"`theurian review build{project}` (if its pull request is gone from GitHub, remove the file instead)")


def manifest_cure(path: str, project_root: Path) -> str:
    """The command that mends a damaged run manifest at `path` (project-relative): it is a past run's record,
    which nothing fetches again; a full ingest records every record's run anew."""
    project = f" --project {shell_word(str(project_root))}"
    return (f"`rm {shell_word(str(project_root / path))}` (every reader skips it), then "
            f"`theurian review ingest --full{project}` records a complete run again")
