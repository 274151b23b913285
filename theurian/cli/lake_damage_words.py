"""Damaged lake files (`evidence.lake_damage`) as `theurian doctor`, `review status` and `project status` show
them: each with the command that mends it, the repository a record file's folder belongs to named from the
manifests, the allowlist, or the records the folder holds (`Lake.repository_named_in`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evidence.lake import Lake
from evidence.lake_damage import SCAN_STOPPED, Damage, manifest_cure, record_cure, scan_cure
from evidence.records import repository_folder
from theurian.text import one_line, shell_word


def folder_names(lake: Lake, manifests: Sequence[dict[str, Any]], allowlisted: Sequence[str],
                 damage: Sequence[Damage]) -> dict[str, str | None]:
    """The OWNER/NAME of each repository folder holding damage: a manifest's, else the allowlist's, else the one
    its records name (None when nothing does)."""
    names: dict[str, str | None] = {m["repositoryFolder"]: m["repository"] for m in manifests}
    for entry in allowlisted:
        names.setdefault(repository_folder(entry), entry)
    for item in damage:
        if item.folder is not None and item.folder not in names:
            names[item.folder] = lake.repository_named_in(item.folder)
    return names


def cure(item: Damage, root: Path, names: Mapping[str, str | None], allowed: set[str]) -> str:
    """The command that mends `item` (`names`, `allowed`: as `folder_names` and the allowlist's folders)."""
    if item.folder is None:
        return manifest_cure(item.path, root)
    if item.reason == SCAN_STOPPED:
        return scan_cure(root)
    return record_cure(names.get(item.folder), root, allowlisted=item.folder in allowed)


def entries(damage: Sequence[Damage], root: Path, names: Mapping[str, str | None],
            allowed: set[str]) -> list[dict[str, str]]:
    """Each damaged file as `review status` and `project status` show it (`damagedEntries`): path, why, cure."""
    return [{"path": item.path, "reason": item.reason, "cure": cure(item, root, names, allowed)} for item in damage]


def line(entry: Mapping[str, str]) -> str:
    """One entry of `entries` as a status line."""
    return f"damaged: {one_line(entry['path'])}: {one_line(entry['reason'])} -> {entry['cure']}"


def summary(damage: Sequence[Damage], root: Path) -> str:
    """What doctor's lake row says of `damage` (not empty): how many, and the first with why. The command that
    names each carries `--project`: doctor runs from anywhere and covers every project."""
    first = damage[0]
    status = f"theurian review status --project {shell_word(str(root))}"
    more = f" and {len(damage) - 1} more (`{status}` names each)" if len(damage) > 1 else ""
    return f"{len(damage)} damaged file(s): {one_line(first.path)} ({one_line(first.reason)}){more}"


def listed(damage: Sequence[Damage]) -> str:
    """What the lake row says of `damage` where each file has its own line (`line`) above it, as in `project
    status`: how many, so the first file and its cure are not shown twice."""
    return f"{len(damage)} damaged file(s), each named above with the command that mends it"
