"""Reading one lake file for a build: what was swapped in after the scan is refused on the open descriptor and never
waited on, a file past the size bound is skipped unread, and a record nested past what can be explained is
skipped with a reason — each a skipped file, never a failed build. The scan that also takes each file's identity
types every entry as the plain listing does."""

from __future__ import annotations

import copy
import os
import shutil
import threading
from pathlib import Path

import orjson
import pytest

import evidence.files as evidence_files
import evidence.lake_read as lake_read
from evidence.files import MAX_RECORD_FILE_BYTES
from evidence.lake_listing import LakeEntry, LakeFile, scan_records
from evidence.lake_read import iter_records, read_entries, read_entry
from evidence.lake_runs import last_seen, read_manifests
from evidence.records import record_file_name, repository_folder
from projection.review_build import build_review_store
from tests.projection.review_records import _sample, new_project, pull_request, thread, write_lake
from theurian.errors import PathEscapeError

REPOSITORY = "Acme/Alpha"


def _read_with_deadline(lake: Path, entry: LakeEntry) -> LakeFile:
    """read_entry on a worker thread: a read that blocks fails the test instead of hanging it."""
    found: list[LakeFile] = []
    worker = threading.Thread(target=lambda: found.append(read_entry(lake, entry)), daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert found, "read_entry blocked"
    return found[0]


def _entry(lake: Path, name: str, *, is_link: bool = False, is_file: bool = True) -> LakeEntry:
    folder = lake / repository_folder(REPOSITORY) / "pull-request"
    folder.mkdir(parents=True, exist_ok=True)
    return LakeEntry(repository_folder(REPOSITORY), "pull-request", name, is_link, is_file)


def test_a_fifo_swapped_in_after_the_scan_is_refused_on_its_descriptor_not_waited_on(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    entry = _entry(lake, "pr_swapped.0.json")  # the scan saw a regular file here
    os.mkfifo(lake / entry.relative)
    assert _read_with_deadline(lake, entry) == LakeFile(entry.relative, None, "not a regular file")


def test_a_link_swapped_in_after_the_scan_is_not_followed(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    entry = _entry(lake, "pr_linked.0.json")
    outside = tmp_path / "outside.json"
    outside.write_bytes(orjson.dumps(pull_request(REPOSITORY, 1, "pr_linked")))
    (lake / entry.relative).symlink_to(outside)
    found = _read_with_deadline(lake, entry)
    assert found.record is None and found.error == "unreadable: OSError"  # ELOOP from O_NOFOLLOW


def test_a_file_past_the_size_bound_is_skipped_unread(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, [pull_request(REPOSITORY, 1, "PR_fine")])
    folder = root / ".theurian/review" / repository_folder(REPOSITORY) / "pull-request"
    huge = folder / "pr_huge.0.json"
    with open(huge, "wb") as sparse:
        sparse.truncate(MAX_RECORD_FILE_BYTES + 1)  # sparse: no disk, and never read into memory
    summary = build_review_store(root, processes=1)
    assert summary.records == 1
    assert summary.skipped == [(f".theurian/review/{huge.relative_to(root / '.theurian/review').as_posix()}",
                                f"larger than {256 * 1024 * 1024} bytes, not read")]


def test_a_file_at_the_size_bound_is_read_and_one_byte_more_is_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evidence_files, "MAX_RECORD_FILE_BYTES", 4096)
    root = new_project(tmp_path / "p")
    [at_bound, past] = write_lake(root, [pull_request(REPOSITORY, 1, "pr_at"), pull_request(REPOSITORY, 2, "pr_past")])
    lake = root / ".theurian/review"
    for relative, size in ((at_bound, 4096), (past, 4097)):
        data = (lake / relative).read_bytes()
        (lake / relative).write_bytes(data + b" " * (size - len(data)))  # JSON allows trailing whitespace
    summary = build_review_store(root, processes=1)
    assert summary.records == 1
    assert summary.skipped == [(f".theurian/review/{past}", "larger than 4096 bytes, not read")]


def test_a_record_nested_too_deep_to_explain_is_skipped_with_a_reason(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, [pull_request(REPOSITORY, 1, "PR_fine")])
    record = copy.deepcopy(_sample("pull-request"))
    record.update(repository=REPOSITORY, recordKey="PR_deep", body="DEEP")
    raw = orjson.dumps(record).replace(b'"DEEP"', b"[" * 1000 + b"]" * 1000)
    folder = root / ".theurian/review" / repository_folder(REPOSITORY) / "pull-request"
    (folder / record_file_name("PR_deep")).write_bytes(raw)
    summary = build_review_store(root, processes=1)
    assert summary.records == 1
    [(path, why)] = summary.skipped
    assert path.endswith(record_file_name("PR_deep")) and why.endswith("nested too deeply to name where it fails")


def test_a_repository_folder_linked_out_of_the_lake_stops_the_reader_with_the_lake_relative_path(
        tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    outside = tmp_path / "outside"
    (outside / "pull-request").mkdir(parents=True)
    (outside / "pull-request" / record_file_name("PR_out")).write_bytes(
        orjson.dumps(pull_request(REPOSITORY, 1, "PR_out")))
    review_dir = root / ".theurian/review"
    review_dir.mkdir()
    (review_dir / repository_folder(REPOSITORY)).symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathEscapeError) as raised:
        list(iter_records(root))
    assert raised.value.relative == f".theurian/review/{repository_folder(REPOSITORY)}"


def test_every_manifest_skipped_is_given_with_why_and_only_the_unreadable_ones_are_named_for_status(
        tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    runs = root / ".theurian/review/runs"
    runs.mkdir(parents=True)
    (runs / "01K4YQ7N2B3C4D5E6F7G8H9JK0.json").write_bytes(b'{"runId": ')
    (runs / "01K4YQ7N2B3C4D5E6F7G8H9JK1.json").write_bytes(b"{}")
    (runs / "01K4YQ7N2B3C4D5E6F7G8H9JK2.json").mkdir()
    (runs / ".01K4YQ7N2B3C4D5E6F7G8H9JK3.json.x.tmp").write_bytes(b"{")
    scan = read_manifests(root)
    assert scan.manifests == []
    assert [(path, why.split(":")[0]) for path, why in scan.skipped] == [
        ("runs/01K4YQ7N2B3C4D5E6F7G8H9JK0.json", "unreadable"),
        ("runs/01K4YQ7N2B3C4D5E6F7G8H9JK1.json", "runs/01K4YQ7N2B3C4D5E6F7G8H9JK1.json"),
        ("runs/01K4YQ7N2B3C4D5E6F7G8H9JK2.json", "not a regular file"),
    ]
    assert scan.unreadable == [".theurian/review/runs/01K4YQ7N2B3C4D5E6F7G8H9JK2.json"]
    assert last_seen(scan.manifests) == {}


def _every_kind_of_file(root: Path) -> Path:
    """A lake of two repositories holding, beside good records, each thing a build skips: a bad name, a link in
    and one out, a FIFO, a folder, bytes that are not JSON, JSON that is not an object, an invalid record, and a
    record in another repository's place."""
    write_lake(root, [pull_request(REPOSITORY, 1, "PR_a"), pull_request(REPOSITORY, 2, "PR_b"),
                      thread(REPOSITORY, 1, "PRRT_a"), pull_request("Acme/Beta", 3, "PR_c")])
    lake = root / ".theurian/review"
    folder = lake / repository_folder(REPOSITORY) / "pull-request"
    (folder / "not-a-record.json").write_bytes(b"{}")
    (folder / "a_link_in.0.json").symlink_to(folder / record_file_name("PR_a"))
    (folder / "a_link_out.0.json").symlink_to(root.parent / "outside.json")
    os.mkfifo(folder / "b_fifo.0.json")
    (folder / "c_folder.0.json").mkdir()
    (folder / "d_broken.0.json").write_bytes(b'{"kind": ')
    (folder / "e_list.0.json").write_bytes(b"[]")
    (folder / record_file_name("PR_bad")).write_bytes(orjson.dumps({**pull_request(REPOSITORY, 4, "PR_bad"),
                                                                     "merged": "yes"}))
    misplaced = pull_request("Acme/Beta", 5, "PR_moved")
    (folder / record_file_name("PR_moved")).write_bytes(orjson.dumps(misplaced))
    return lake


def test_reading_a_run_of_entries_answers_each_file_exactly_as_reading_it_alone_does(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    lake = _every_kind_of_file(root)
    entries, _ = scan_records(root)
    swapped = next(entry for entry in entries if entry.name == "a_link_in.0.json")
    entries.insert(entries.index(swapped), swapped._replace(is_link=False, is_file=True))  # a link since the scan
    alone = [read_entry(lake, entry) for entry in entries]
    assert list(read_entries(lake, entries)) == alone
    assert sum(found.record is not None for found in alone) == 4  # each kind of answer is in the run
    assert {found.error for found in alone} == {
        None, "file name is not <recordKey>.<case mask>.json", "not a regular file", "unreadable: JSONDecodeError",
        "not a JSON object", "`merged` must be of type boolean",
        "repository, kind or key does not match the record's path", "unreadable: OSError",
        "a link out of .theurian/review, not followed"}


def test_a_kind_folder_gone_since_the_scan_has_each_of_its_files_refused_as_reading_it_alone_does(
        tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    lake = _every_kind_of_file(root)
    entries, _ = scan_records(root)
    shutil.rmtree(lake / repository_folder(REPOSITORY) / "pull-request")
    alone = [read_entry(lake, entry) for entry in entries]
    assert list(read_entries(lake, entries)) == alone
    gone = [found for found in alone if found.record_path.startswith(f"{repository_folder(REPOSITORY)}/pull-request/")]
    assert gone and all(found.record is None for found in gone)
    assert "unreadable: FileNotFoundError" in {found.error for found in gone}


def _entries_of_sizes(lake: Path, sizes: list[int]) -> list[LakeEntry]:
    entries = []
    for index, size in enumerate(sizes):
        entry = _entry(lake, f"pr_{index}.0.json")
        (lake / entry.relative).write_bytes(b" " * size)
        entries.append(entry)
    return entries


def test_a_batch_of_reads_holds_at_most_its_file_count_and_the_rest_come_next(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    run = iter(_entries_of_sizes(lake, [1] * (lake_read.READ_BATCH_FILES + 1)))
    assert [len(lake_read._read_some(lake, run, None)) for _ in range(3)] == [lake_read.READ_BATCH_FILES, 1, 0]


@pytest.mark.parametrize(("sizes", "first_batch"), [([50, 50, 50], 2), ([50, 49, 50], 3)])
def test_a_batch_of_reads_ends_with_the_file_that_brings_it_to_its_byte_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sizes: list[int], first_batch: int) -> None:
    monkeypatch.setattr(lake_read, "READ_BATCH_BYTES", 100)
    lake = tmp_path / "lake"
    run = iter(_entries_of_sizes(lake, sizes))
    assert len(lake_read._read_some(lake, run, None)) == first_batch


def test_reading_many_files_in_batches_answers_each_as_reading_it_alone_does(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    count = 2 * lake_read.READ_BATCH_FILES + 5
    write_lake(root, [pull_request(REPOSITORY, index + 1, f"PR_{index}") for index in range(count)]
               + [thread(REPOSITORY, index + 1, f"PRRT_{index}") for index in range(count)])
    folder = root / ".theurian/review" / repository_folder(REPOSITORY) / "pull-request"
    for index in (0, lake_read.READ_BATCH_FILES - 1, lake_read.READ_BATCH_FILES, count - 1):  # at each batch's edge
        (folder / record_file_name(f"PR_{index}")).write_bytes(b"[]" if index % 2 else b'{"kind": ')
    lake = root / ".theurian/review"
    entries, _ = scan_records(root)
    alone = [read_entry(lake, entry) for entry in entries]
    assert list(read_entries(lake, entries)) == alone
    assert sum(found.record is None for found in alone) == 4 and len(alone) == 2 * count
    assert [found.record_path for found in iter_records(root)] == sorted(found.record_path for found in alone)
