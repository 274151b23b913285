"""evidence.content_policy's salt: made once, whole, by whichever first use wins; never seen empty, never left
empty by a crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evidence.content_policy import SALT_FILE, lake_salt, project_salt, salt_refusal
from evidence.errors import SaltRefusedError
from evidence.lake import Lake
from evidence.salt_key import SALT_FINGERPRINT_FIELD, LakeKey, lake_key, salt_fingerprint
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


FIXTURE_MANIFEST = Path(__file__).resolve().parents[2] / "fixtures/evidence/runs/01K4YQ7N2B3C4D5E6F7G8H9JKM.json"


def _manifest(project: Path, run_id: str, fingerprint: str | None) -> None:
    """A copy of the bundled run manifest under `run_id`, recording `fingerprint` (or, None, no fingerprint)."""
    manifest = json.loads(FIXTURE_MANIFEST.read_text(encoding="utf-8")) | {"runId": run_id}
    if fingerprint is not None:
        manifest[SALT_FINGERPRINT_FIELD] = fingerprint
    Lake(project).write_manifest(manifest)


def test_the_newest_manifest_recording_a_fingerprint_names_the_lakes_salt_and_older_ones_do_not_refuse_it(
        tmp_path: Path) -> None:
    project = _project(tmp_path)
    salt = project_salt(project)
    _manifest(project, "01K4YQ7N2B3C4D5E6F7G8H9JK0", "0" * 16)  # the key before a re-key
    _manifest(project, "01K4YQ7N2B3C4D5E6F7G8H9JK1", salt_fingerprint(salt))
    _manifest(project, "01K4YQ7N2B3C4D5E6F7G8H9JK2", None)  # a manifest from before fingerprints says nothing
    assert lake_key(project) == LakeKey(salt_fingerprint(salt), "01K4YQ7N2B3C4D5E6F7G8H9JK1")
    assert lake_salt(project) == salt and salt_refusal(project) is None
    _manifest(project, "01K4YQ7N2B3C4D5E6F7G8H9JK3", "0" * 16)
    with pytest.raises(SaltRefusedError, match="is not the salt the lake was keyed by"):
        lake_salt(project)


def test_a_salt_is_made_over_a_lake_whose_manifests_record_none_and_refused_over_one_that_does(
        tmp_path: Path) -> None:
    project = _project(tmp_path)
    _manifest(project, "01K4YQ7N2B3C4D5E6F7G8H9JK0", None)
    assert lake_key(project) is None and salt_refusal(project) is None and len(lake_salt(project)) == 32
    (project / SALT_FILE).unlink()
    _manifest(project, "01K4YQ7N2B3C4D5E6F7G8H9JK1", "0" * 16)
    refusal = salt_refusal(project)
    assert refusal is not None and refusal.problem.startswith(f"{SALT_FILE} is missing")
    for maker in (project_salt, lake_salt):
        with pytest.raises(SaltRefusedError):
            maker(project)
    assert not (project / SALT_FILE).exists()
    assert len(lake_salt(project, rekey=True)) == 32  # the deliberate new key


def test_a_salt_is_refused_to_acknowledgements_alone_and_made_once_they_are_taken_out(tmp_path: Path) -> None:
    project = _project(tmp_path)
    config = project / ".theurian/config.toml"
    config.write_text('[review]\nacknowledged_secrets = ["0123456789abcdef"]\n', encoding="utf-8")
    with pytest.raises(SaltRefusedError, match="acknowledged_secrets"):
        project_salt(project)
    config.write_text("[review]\nacknowledged_secrets = []\n", encoding="utf-8")
    assert len(project_salt(project)) == 32


def test_a_salt_fingerprint_is_sixteen_hex_digits_that_do_not_hold_the_salt() -> None:
    salt = bytes(range(32))
    fingerprint = salt_fingerprint(salt)
    assert len(fingerprint) == 16 and int(fingerprint, 16) >= 0 and salt.hex()[:16] != fingerprint
    assert salt_fingerprint(bytes(32)) != fingerprint
