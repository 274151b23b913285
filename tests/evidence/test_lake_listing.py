"""Listing the lake: the scan that also takes each file's identity types every entry as the plain listing does,
and a kind folder listed alone is listed as the whole scan lists it."""

from __future__ import annotations

import os
from pathlib import Path

from evidence.lake_listing import kind_entries, scan_records
from evidence.records import record_file_name, repository_folder
from tests.projection.review_records import new_project, pull_request, write_lake

REPOSITORY = "Acme/Alpha"


def test_the_scan_with_identities_types_every_entry_as_the_listing_does_and_takes_each_lstat(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, [pull_request(REPOSITORY, 1, "PR_a"), pull_request(REPOSITORY, 2, "PR_b")])
    folder = root / ".theurian/review" / repository_folder(REPOSITORY) / "pull-request"
    (folder / "a_link_in.0.json").symlink_to(folder / record_file_name("PR_a"))
    (folder / "a_link_out.0.json").symlink_to(tmp_path / "outside.json")
    os.mkfifo(folder / "b_fifo.0.json")
    (folder / "c_folder.0.json").mkdir()
    (folder / ".PR_c.0.json.tmp").write_bytes(b"{")  # a killed writer's leftover: never listed
    typed, _ = scan_records(root)
    identified, _ = scan_records(root, identities=True)
    assert [entry._replace(identity=None) for entry in identified] == typed
    assert [(entry.name, entry.is_link, entry.is_file) for entry in typed] == [
        (record_file_name("PR_a"), False, True), (record_file_name("PR_b"), False, True),
        ("a_link_in.0.json", True, False), ("a_link_out.0.json", True, False), ("b_fifo.0.json", False, False),
        ("c_folder.0.json", False, False)]
    for entry in identified:
        status = os.lstat(folder / entry.name)
        assert entry.identity == (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns,
                                  status.st_ctime_ns)


def test_a_kind_folder_listed_alone_gives_the_entries_the_whole_scan_gives_for_it(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, [pull_request(REPOSITORY, 1, "PR_a"), pull_request(REPOSITORY, 2, "PR_b"),
                      pull_request("Acme/Beta", 3, "PR_c")])
    lake = root / ".theurian/review"
    entries, problems = scan_records(root)
    assert problems == []
    folder = repository_folder(REPOSITORY)
    alone = kind_entries(lake, folder, "pull-request")
    assert alone == [entry for entry in entries if entry.folder == folder and entry.kind == "pull-request"]
    assert [entry.name for entry in alone] == [record_file_name("PR_a"), record_file_name("PR_b")]
    assert kind_entries(lake, folder, "review-thread") == []  # absent: nothing, not a refusal
