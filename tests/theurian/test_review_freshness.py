"""`lake_change_since`: what `doctor` and `project status` take as a change to the lake after the review store's
build, at exactly the store's time (a change) and one nanosecond before it (none)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from theurian.cli.review_freshness import lake_change_since, resume_command

FOLDER = "sha256-" + "0" * 64
KIND = f".theurian/review/{FOLDER}/review-thread"
LONG_AGO_NS = 1_700_000_000_000_000_000  # November 2023


@pytest.fixture
def lake(tmp_path: Path) -> tuple[Path, int]:
    """A project whose lake holds one record file, every mtime long ago; and a store time after its last change
    (ctime cannot be set back: dating the store after the file's ctime is what a build after the last write is)."""
    kind = tmp_path / "project" / KIND
    kind.mkdir(parents=True)
    (kind / "a.json").write_text("{}", encoding="utf-8")
    for path in (kind / "a.json", kind, kind.parent, kind.parent.parent):
        os.utime(path, ns=(LONG_AGO_NS, LONG_AGO_NS))
    return tmp_path / "project", (kind / "a.json").stat().st_ctime_ns + 10


def test_a_lake_older_than_the_store_has_no_change(lake: tuple[Path, int]) -> None:
    root, built = lake
    assert lake_change_since(root, [FOLDER], built) is None


@pytest.mark.parametrize("relative", [".theurian/review", f".theurian/review/{FOLDER}", KIND])
def test_a_folder_dated_exactly_at_the_store_counts_as_a_change_and_one_ns_before_does_not(
        lake: tuple[Path, int], relative: str) -> None:
    root, built = lake
    os.utime(root / relative, ns=(built - 1, built - 1))
    assert lake_change_since(root, [FOLDER], built) is None
    os.utime(root / relative, ns=(built, built))
    assert lake_change_since(root, [FOLDER], built) == f"a record was added, removed or renamed in {relative} since"


def test_a_file_edited_in_place_is_a_change_at_exactly_the_store_time_and_not_one_ns_before(
        lake: tuple[Path, int]) -> None:
    root, built = lake
    record = root / KIND / "a.json"
    os.utime(record, ns=(built - 1, built - 1))
    assert lake_change_since(root, [FOLDER], built) is None
    record.write_text('{"edited": true}', encoding="utf-8")  # in place: the folder's mtime stays long ago
    os.utime(record, ns=(built, built))
    assert lake_change_since(root, [FOLDER], built) == f"{KIND}/a.json was changed since"


def test_a_project_copied_whole_keeps_its_mtimes_and_so_its_verdict(lake: tuple[Path, int], tmp_path: Path) -> None:
    root, built = lake
    copied = tmp_path / "copy"
    shutil.copytree(root / ".theurian", copied / ".theurian")  # every ctime now, every mtime kept
    assert lake_change_since(copied, [FOLDER], built) is None


def test_an_interrupted_run_is_resumed_by_the_ingest_it_was_with_its_own_options(tmp_path: Path) -> None:
    root = tmp_path / "my project"
    base = {"repository": "Acme/Widgets", "rescanOpen": False, "window": {"since": None, "until": "x"}}
    project = f"--project '{root}'"  # quoted: a path with a space, pasted, must name this folder
    assert resume_command(base | {"mode": "incremental"}, root) == f"theurian review ingest Acme/Widgets {project}"
    assert resume_command(base | {"mode": "full", "rescanOpen": True}, root) == (
        f"theurian review ingest --full --rescan-open Acme/Widgets {project}")
    since = base | {"mode": "since", "window": {"since": "2026-01-01T00:00:00+00:00", "until": "x"}}
    assert resume_command(since, root) == (
        f"theurian review ingest --since 2026-01-01T00:00:00+00:00 Acme/Widgets {project}")
