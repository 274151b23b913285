"""The incremental review build: a record whose file is unchanged is taken over from the store it replaces, every
other one read again, and the store is the one a full build makes, table by table."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from evidence.lake import Lake
from projection.review_build import build_review_store
from projection.review_layout import BLOCK_RECORDS
from projection.review_reuse import FILES_DIR
from projection.review_store import store_path
from tests.projection.review_records import new_project, pull_request, review, settle, thread, write_lake
from tests.support import concern_set
from tests.support.fake_model import write_fake_model
from tests.support.store_tables import stamped_tables
from theurian.installation import HOME_OVERRIDE_ENV, installation_config_path, state_dir

REPOSITORIES = ("Acme/Alpha", "Acme/Beta")


def _records(count: int) -> list[dict[str, Any]]:
    records = []
    for n in range(1, count + 1):
        repository = REPOSITORIES[n % 2]
        records.append(pull_request(repository, n, f"PR_{n}", title=f"change {n}", body=f"retry the lock {n}"))
        records.append(review(repository, n, f"PRR_{n}", body=f"please take lock {n} first"))
        records.append(thread(repository, n, f"PRRT_{n}", bodies=(f"cache {n} is stale", "agreed")))
    records.append(thread(REPOSITORIES[0], 2, "PRRT_silent", bodies=()))  # a thread holding no text at all
    return records


def _lake(tmp_path: Path) -> tuple[Path, list[dict[str, Any]], list[str]]:
    root = new_project(tmp_path / "p")
    records = _records(3 * BLOCK_RECORDS)  # 577 records: several word blocks per repository
    paths = write_lake(root, records)
    settle(root)
    return root, records, paths


def test_an_incremental_build_after_a_change_equals_a_full_build_table_by_table(tmp_path: Path) -> None:
    root, records, paths = _lake(tmp_path)
    first = build_review_store(root)
    assert (first.records, first.records_reused) == (len(records), 0)
    lake = Lake(root)
    edited = [records[index] | {"body": f"edited body {index}"} for index in (1, 301)]  # two reviews
    for record in edited:
        lake.put(record)
    added = [thread("Acme/Gamma", 7, "PRRT_new", bodies=("a new thread",))]
    write_lake(root, added)
    removed = paths[5]  # a thread
    (root / ".theurian/review" / removed).unlink()
    incremental = build_review_store(root)
    assert incremental.records == len(records) + len(added) - 1
    assert incremental.records_reused == len(records) - len(edited) - 1
    assert incremental.embedded == len(edited) + len(added)  # vectors made only for what changed
    taken_over = stamped_tables(root)
    assert removed not in {row[1] for row in taken_over["records"]}
    assert "edited body 301" in {row[3] for row in taken_over["texts"]}
    full = build_review_store(root, full=True)
    assert full.records_reused == 0 and full.records == incremental.records
    assert stamped_tables(root) == taken_over


def test_a_file_rewritten_in_place_with_its_size_and_mtime_put_back_is_read_again(tmp_path: Path) -> None:
    root, records, paths = _lake(tmp_path)
    build_review_store(root)
    path = root / ".theurian/review" / paths[1]
    before = path.stat()
    data = path.read_bytes()
    assert b"please take lock 1 first" in data
    with open(path, "r+b") as file:  # the same inode, the same size: only ctime tells
        file.write(data.replace(b"please take lock 1 first", b"PLEASE TAKE LOCK 1 FIRST"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (path.stat().st_ino, path.stat().st_size, path.stat().st_mtime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns)
    summary = build_review_store(root)
    assert summary.records_reused == len(records) - 1
    assert "PLEASE TAKE LOCK 1 FIRST" in {row[3] for row in stamped_tables(root)["texts"]}


def test_a_store_that_is_not_the_one_the_files_were_recorded_with_lends_nothing(tmp_path: Path) -> None:
    root, records, _ = _lake(tmp_path)
    build_review_store(root)
    kept = tmp_path / "first.duckdb"
    shutil.copyfile(store_path(root), kept)  # a genuine store of this installation, of an earlier build
    build_review_store(root, full=True)
    expected = stamped_tables(root)
    os.replace(kept, store_path(root))
    summary = build_review_store(root)
    assert (summary.records, summary.records_reused) == (len(records), 0)
    assert stamped_tables(root) == expected


def test_without_a_store_to_replace_every_file_is_read(tmp_path: Path) -> None:
    root, records, _ = _lake(tmp_path)
    build_review_store(root)
    store_path(root).unlink()
    summary = build_review_store(root)
    assert (summary.records, summary.records_reused) == (len(records), 0)


def test_a_store_built_with_another_model_lends_no_record(tmp_path: Path) -> None:
    root, records, _ = _lake(tmp_path)
    config = installation_config_path()
    config.parent.mkdir(parents=True)
    config.write_text(f'embedding_model = "{write_fake_model(tmp_path / "fake")}"\n', encoding="utf-8")
    build_review_store(root)
    config.unlink()  # the installation is back on the bundled model: the store is superseded
    summary = build_review_store(root)
    assert (summary.records, summary.records_reused, summary.reused) == (len(records), 0, 0)


def test_a_store_and_file_record_carried_to_another_installation_lend_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, records, _ = _lake(tmp_path)
    build_review_store(root)
    carried = state_dir() / FILES_DIR
    other = tmp_path / "other-installation"
    monkeypatch.setenv(HOME_OVERRIDE_ENV, str(other))
    shutil.copytree(carried, state_dir() / FILES_DIR)  # the record too, as a copied home folder would carry it
    summary = build_review_store(root)
    assert (summary.records, summary.records_reused) == (len(records), 0)


def test_an_incremental_build_finds_the_concerns_a_full_build_finds_reading_the_taken_over_members_facts(
        tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, concern_set.lake_records())
    settle(root)
    build_review_store(root)
    write_lake(root, [thread("Acme/Gamma", 900, "PRRT_unrelated", bodies=("a thread unlike the others",))])
    incremental = build_review_store(root)
    assert incremental.records_reused > 0 and incremental.concerns > 0
    # The members were taken over unread: their first-seen times, the anchors (so the ids) and the gate counts come
    # from their files, read for the clustering alone.
    taken_over = stamped_tables(root)
    full = build_review_store(root, full=True)
    assert full.records_reused == 0 and full.concerns == incremental.concerns
    assert stamped_tables(root) == taken_over


def test_records_taken_over_with_their_recorded_words_index_as_a_full_build_does_on_any_text(tmp_path: Path) -> None:
    # Words holding a NUL (the joiner), every kind of whitespace, letters past ASCII, empty texts: the words the
    # file record keeps come back exactly, so the word blocks and the concern units are a full build's.
    bodies = ("Ünïcode ’quotes’ and \x00NUL\x00inside words", "tab\tline\nbreak\x1cfile\u2028sep\u3000wide",
              "", "  LEADING and trailing  ", "caf\u00e9 \u212aelvin \u0130stanbul \U0001f600 emoji")
    root = new_project(tmp_path / "p")
    records = [thread(REPOSITORIES[n % 2], n, f"PRRT_w{n}", bodies=bodies[n % 5:] + bodies[:n % 5])
               for n in range(1, 2 * BLOCK_RECORDS + 1)]
    records += [review(REPOSITORIES[0], n, f"PRR_w{n}", body=bodies[n % 5]) for n in range(1, BLOCK_RECORDS + 1)]
    write_lake(root, records)
    settle(root)
    build_review_store(root)
    incremental = build_review_store(root)
    assert (incremental.records, incremental.records_reused) == (len(records), len(records))
    taken_over = stamped_tables(root)
    assert {"nul", "inside", "Ünïcode", "’quotes’", "\u212aelvin"} <= set(taken_over["word_blocks"][0][1].split("\x00"))
    build_review_store(root, full=True)
    assert stamped_tables(root) == taken_over


def test_a_file_record_whose_words_were_altered_lends_nothing(tmp_path: Path) -> None:
    root, records, _ = _lake(tmp_path)
    build_review_store(root)
    (record,) = (state_dir() / FILES_DIR).iterdir()
    data = record.read_bytes()
    assert b" stale" in data.partition(b'"words":')[2]  # a word of `cache n is stale`, as the record keeps it
    record.write_bytes(data.replace(b" stale", b" fresh"))
    summary = build_review_store(root)
    assert (summary.records, summary.records_reused) == (len(records), 0)
