"""Durable writes: the new bytes or the old ones, never a torn file, and no temporary file left behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from theurian.durable import create_file_once, create_private_file_once, write_bytes_durably, write_text_durably


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_durable_write_replaces_the_file_whole_at_the_mode_asked_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_bytes(b"old")
    write_bytes_durably(target, b"new bytes", mode=0o640)
    assert target.read_bytes() == b"new bytes"
    assert _mode(target) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["config.toml"]


def test_a_durable_text_write_is_utf8(tmp_path: Path) -> None:
    target = tmp_path / "note.txt"
    write_text_durably(target, "Grüße — 東京")
    assert target.read_bytes() == "Grüße — 東京".encode()


def test_a_write_that_fails_keeps_the_old_file_and_removes_its_temporary(tmp_path: Path) -> None:
    target = tmp_path / "store"
    target.mkdir()  # os.replace cannot put a file over a folder: the replace itself fails
    with pytest.raises(OSError):
        write_bytes_durably(target, b"new")
    assert target.is_dir()
    assert sorted(os.listdir(tmp_path)) == ["store"]


def test_a_write_whose_bytes_cannot_be_written_removes_its_temporary(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_bytes(b"old")
    with pytest.raises(TypeError):
        write_bytes_durably(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["file"]


def test_create_once_writes_a_new_file_and_keeps_one_another_process_made_first(tmp_path: Path) -> None:
    target = tmp_path / "salt"
    assert create_file_once(target, b"first", mode=0o644) is True
    assert create_file_once(target, b"second", mode=0o644) is False
    assert target.read_bytes() == b"first"
    assert _mode(target) == 0o644
    assert sorted(os.listdir(tmp_path)) == ["salt"]


def test_a_private_file_is_0600_in_a_new_0700_folder(tmp_path: Path) -> None:
    target = tmp_path / "secrets" / "token"
    create_private_file_once(target, b"t0ken")
    assert target.read_bytes() == b"t0ken"
    assert _mode(target) == 0o600
    assert _mode(target.parent) == 0o700
