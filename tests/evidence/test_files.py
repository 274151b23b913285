"""evidence.files: the one safe read of a lake file — read to its end whatever the reads return, bounded even
for a file that grows while it is read, and a run manifest bounded at its own, larger size."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import theurian.files as files  # the kernel reader behind the lake's (its os calls are patched)
from evidence.errors import NotRegularFile
from evidence.files import MAX_MANIFEST_FILE_BYTES, read_opened, read_regular
from evidence.lake import Lake
from theurian.project import REVIEW_DIR

CONTENT = bytes(range(256)) * 4  # 1,024 bytes


def _file(tmp_path: Path, data: bytes = CONTENT) -> Path:
    path = tmp_path / "f.json"
    path.write_bytes(data)
    return path


def _fstat_reporting(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """fstat says the file is `size` bytes: what a reader sees when the file grows after its fstat."""
    real = os.fstat

    def stale(fd: int) -> os.stat_result:
        fields: list[Any] = list(real(fd))
        fields[6] = size  # st_size
        return os.stat_result(fields)

    monkeypatch.setattr(files.os, "fstat", stale)


def test_short_reads_do_not_cut_a_file_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.read
    monkeypatch.setattr(files.os, "read", lambda fd, n: real(fd, min(n, 7)))  # a network file system, say
    assert read_opened(_file(tmp_path)) == CONTENT


def test_a_file_that_grew_after_its_fstat_is_read_to_its_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fstat_reporting(monkeypatch, 10)
    assert read_opened(_file(tmp_path)) == CONTENT


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every `os.read` the reader makes, by the size it asked."""
    real, asked = os.read, []

    def counted(fd: int, n: int) -> bytes:
        asked.append(n)
        return real(fd, n)

    monkeypatch.setattr(files.os, "read", counted)
    return asked


@pytest.mark.parametrize("data", [CONTENT, b""])
def test_a_file_whose_first_read_returns_the_size_its_fstat_gave_is_read_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    asked = _counting_reads(monkeypatch)
    assert read_opened(_file(tmp_path, data)) == data
    assert asked == [len(data) + 1]


def test_a_first_read_one_byte_short_of_the_size_reads_on_to_the_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.read
    monkeypatch.setattr(files.os, "read", lambda fd, n: real(fd, min(n, len(CONTENT) - 1)))
    assert read_opened(_file(tmp_path)) == CONTENT


def test_a_bare_name_is_opened_in_the_folder_its_descriptor_names(tmp_path: Path) -> None:
    _file(tmp_path)
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert read_opened("f.json", dir_fd=folder) == CONTENT
        os.symlink("f.json", tmp_path / "link.json")
        with pytest.raises(OSError):  # ELOOP: a link at the leaf is never followed, by name as by path
            read_opened("link.json", dir_fd=folder)
    finally:
        os.close(folder)


@pytest.mark.parametrize(("size", "refused"), [(1023, True), (1024, False)])
def test_a_file_that_grew_past_the_bound_is_refused_and_one_at_it_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, refused: bool) -> None:
    _fstat_reporting(monkeypatch, 10)
    path = _file(tmp_path)
    if refused:
        with pytest.raises(NotRegularFile, match="larger than 1023 bytes, not read"):
            read_opened(path, max_bytes=size)
    else:
        assert read_opened(path, max_bytes=size) == CONTENT


def test_a_link_is_followed_only_inside_the_lake_and_a_folder_is_never_read(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "inside.json").write_bytes(CONTENT)
    (lake / "link-in.json").symlink_to(lake / "inside.json")
    (tmp_path / "outside.json").write_bytes(b"{}")
    (lake / "link-out.json").symlink_to(tmp_path / "outside.json")
    (lake / "folder.json").mkdir()
    assert read_regular(lake, "link-in.json") == CONTENT
    with pytest.raises(NotRegularFile, match="a link out of"):
        read_regular(lake, "link-out.json")
    with pytest.raises(NotRegularFile, match="not a regular file"):
        read_regular(lake, "folder.json")


def test_a_run_manifest_past_its_bound_is_named_unreadable_and_never_read(tmp_path: Path) -> None:
    runs = tmp_path / REVIEW_DIR / "runs"
    runs.mkdir(parents=True)
    with open(runs / "01JHUGE.json", "wb") as sparse:
        sparse.truncate(MAX_MANIFEST_FILE_BYTES + 1)  # sparse: no disk, and reading it would take a GiB
    scan = Lake(tmp_path).scan_manifests()
    assert (scan.manifests, scan.unreadable) == ([], [f"{REVIEW_DIR}/runs/01JHUGE.json"])
