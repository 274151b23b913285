"""evidence.content_policy's salt: made once, whole, by whichever first use wins; never seen empty, never left
empty by a crash."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evidence.content_policy import SALT_FILE, project_salt
from tests.support.installation import Installation
from theurian.errors import ConfigError
from theurian.project import REVIEW_DIR


def _project(tmp_path: Path) -> Path:
    (tmp_path / ".theurian").mkdir()
    return tmp_path


def test_a_second_first_use_while_the_first_is_writing_gets_the_same_salt_never_an_empty_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worst interleaving, made on purpose: the second use runs while the first holds its write (an exclusive
    create followed by a write showed it an empty file there, and it refused the project as damaged)."""
    root = _project(tmp_path)
    real_write, real_fsync = os.write, os.fsync
    held: list[bool] = []
    seen: list[bytes] = []

    def second_use_first(call: Callable[..., Any]) -> Callable[..., Any]:
        def holding(*args: Any) -> Any:
            if not held:  # the first write or sync of the first use: the second runs now, whole
                held.append(True)
                seen.append(project_salt(root))
            return call(*args)
        return holding

    monkeypatch.setattr(os, "write", second_use_first(real_write))
    monkeypatch.setattr(os, "fsync", second_use_first(real_fsync))
    first = project_salt(root)
    assert seen == [first] and len(first) == 32
    assert (root / SALT_FILE).read_text(encoding="ascii") == first.hex() + "\n"
    assert oct((root / SALT_FILE).stat().st_mode & 0o777) == oct(0o644)  # source, committed beside the lake


def test_a_first_use_stopped_before_its_salt_is_whole_leaves_no_salt_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path)

    def stopped(*_args: object) -> None:
        raise KeyboardInterrupt  # as a crash would, between writing the bytes and their sync

    monkeypatch.setattr(os, "fsync", stopped)
    monkeypatch.setattr(os, "write", stopped)
    with pytest.raises(KeyboardInterrupt):
        project_salt(root)
    monkeypatch.undo()
    assert sorted(p.name for p in (root / ".theurian").iterdir()) == []  # no salt, and no temporary file either
    assert len(project_salt(root)) == 32  # the next use makes it


def test_many_first_uses_at_once_all_get_the_same_whole_salt(tmp_path: Path) -> None:
    root = _project(tmp_path)
    probe = ("import pathlib; from evidence.content_policy import project_salt as s; "
             f"print(s(pathlib.Path({str(root)!r})).hex())")
    processes = [subprocess.Popen([sys.executable, "-c", probe], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(8)]
    outcomes = [process.communicate(timeout=60) for process in processes]
    assert [err for _, err in outcomes if err] == []
    assert len({out.strip() for out, _ in outcomes}) == 1


def test_an_empty_salt_file_is_refused_as_damage_not_replaced(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / SALT_FILE).write_bytes(b"")
    with pytest.raises(ConfigError, match="does not hold a salt"):
        project_salt(root)
    assert (root / SALT_FILE).read_bytes() == b""


def test_a_first_salt_is_made_over_an_empty_lake(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / REVIEW_DIR / "runs").mkdir(parents=True)  # a lake with no repository folder holds no record
    assert len(project_salt(project)) == 32 and (project / SALT_FILE).is_file()


def test_a_dry_run_scan_over_an_empty_lake_writes_no_salt(installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project(tmp_path / "p")
    result = installation.cli("review", "scan", "--dry-run", "--project", str(project), check=True)
    assert result.stdout.startswith("scanned 0 records") and not (project / SALT_FILE).exists()
