"""What a build does with the temp files and folders a killed build left beside its store: removes exactly its
own store's, and never one a build still running holds."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from projection.build_temp import building_folder
from projection.findings_build import build_findings_store
from projection.findings_store import STORE_RELATIVE as FINDINGS_RELATIVE
from projection.review_build import build_review_store
from projection.review_store import STORE_RELATIVE as REVIEW_RELATIVE
from tests.projection.git_fixture import T0, Planned, message, trailer, write_history
from tests.projection.review_records import copy_fixture_lake

KEPT = b"# a file nothing may touch\n"


def _project_with_history(root: Path) -> Path:
    write_history(root, [Planned(T0, message("one", [trailer("security", "LOW", "first")]))])
    (root / ".theurian" / "state").mkdir(parents=True)
    return root


def test_a_findings_build_removes_the_leftovers_of_a_killed_build_and_nothing_else(tmp_path: Path) -> None:
    root = _project_with_history(tmp_path / "repo")
    state = root / ".theurian" / "state"
    name = Path(FINDINGS_RELATIVE).name
    leftover = state / f".{name}.k1ll3d_x.building"
    leftover.write_bytes(b"x" * 4096)
    linked_leftover = state / f".{name}.l1nk3d__.building"
    (root / "tracked.txt").write_bytes(KEPT)
    linked_leftover.symlink_to(root / "tracked.txt")
    others = [state / f"{name}.building", state / f".{name}.notes", state / "unrelated.building",
              state / ".review-store.duckdb.abcd1234.building"]
    for other in others:
        other.write_bytes(b"not ours")
    build_findings_store(root)
    assert not leftover.exists() and not linked_leftover.is_symlink()
    assert (root / "tracked.txt").read_bytes() == KEPT
    assert all(other.read_bytes() == b"not ours" for other in others)
    assert sorted(p.name for p in state.iterdir()) == sorted([name, *(o.name for o in others)])


def test_a_review_build_removes_the_leftover_folders_of_a_killed_build_and_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "p"
    state = root / ".theurian" / "state"
    state.mkdir(parents=True)
    copy_fixture_lake(root)
    name = Path(REVIEW_RELATIVE).name
    leftover = state / f".{name}.k1ll3d_x.building"
    leftover.mkdir()
    (leftover / "records.ndjson").write_bytes(b"{}\n" * 1000)
    (leftover / "store.duckdb").write_bytes(b"half a database")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_bytes(KEPT)
    (leftover / "link-out").symlink_to(outside, target_is_directory=True)
    others = [state / f".{name}.notes", state / ".theurian-findings-local.sqlite.abcd1234.building"]
    for other in others:
        other.write_bytes(b"not ours")
    build_review_store(root)
    assert not leftover.exists()
    assert (outside / "precious.txt").read_bytes() == KEPT
    assert all(other.read_bytes() == b"not ours" for other in others)
    assert sorted(p.name for p in state.iterdir()) == sorted([name, *(o.name for o in others)])


def test_a_leftover_held_by_a_build_still_running_is_left_alone(tmp_path: Path) -> None:
    """A concurrent build's temp is locked by its process; only a temp nobody holds is a leftover."""
    root = _project_with_history(tmp_path / "repo")
    state = root / ".theurian" / "state"
    live = state / f".{Path(FINDINGS_RELATIVE).name}.l1ve____.building"
    live.write_bytes(b"being written")
    script = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX); "
              "print('held', flush=True); sys.stdin.read()")
    # Another process, as a concurrent build is: it holds the lock until its stdin closes.
    with subprocess.Popen([sys.executable, "-c", script, str(live)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) as holder:
        assert holder.stdin is not None and holder.stdout is not None
        assert holder.stdout.readline() == b"held\n"
        build_findings_store(root)
        assert live.read_bytes() == b"being written"
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0
    build_findings_store(root)
    assert not live.exists()
    assert os.listdir(state) == [Path(FINDINGS_RELATIVE).name]


def test_a_temp_folder_swept_away_before_its_build_could_lock_it_costs_a_retry_not_the_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another build's sweep can remove a folder between `mkdtemp` and the open that locks it: the open failed and
    the build with it (two of 64 overlapping builds, measured)."""
    real_mkdtemp = tempfile.mkdtemp
    made: list[str] = []

    def mkdtemp_swept_once(*args: Any, **kwargs: Any) -> str:
        name = real_mkdtemp(*args, **kwargs)
        made.append(name)
        if len(made) == 1:
            os.rmdir(name)  # what the other build's sweep does, unlocked folder as it is
        return name

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp_swept_once)
    with building_folder(tmp_path, "review-store.duckdb") as claimed:
        assert claimed.is_dir() and str(claimed) == made[1]
