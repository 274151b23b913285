from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from evidence.errors import RecordInvalidError
from evidence.lake import Lake, Outcome
from evidence.lake_read import iter_records
from evidence.records import canonical_bytes, repository_folder
from tests.evidence.sample_lake import FIXTURE_LAKE, fixture_records


def test_the_hand_written_sample_lake_reads_back_valid_and_canonical(project: Path) -> None:
    shutil.copytree(FIXTURE_LAKE, project / ".theurian" / "review")
    entries = list(iter_records(project))
    assert len(entries) == 6
    assert [e.error for e in entries] == [None] * 6
    for entry in entries:
        assert entry.record is not None
        stored = (project / ".theurian" / "review" / entry.record_path).read_bytes()
        assert stored == canonical_bytes(entry.record)
    assert len(Lake(project).manifests()) == 1


def test_a_record_is_created_then_left_alone_then_updated_on_an_edit(project: Path) -> None:
    lake = Lake(project)
    record = next(r for r in fixture_records() if r["kind"] == "pull-request")
    first = lake.put(record)
    path = project / ".theurian" / "review" / first.record_path
    mtime = path.stat().st_mtime_ns
    assert first.outcome is Outcome.CREATED
    assert lake.put(dict(record)).outcome is Outcome.UNCHANGED
    assert path.stat().st_mtime_ns == mtime
    edited = record | {"title": "Retry order writes (edited)"}
    assert lake.put(edited).outcome is Outcome.UPDATED
    assert lake.load(record["repository"], "pull-request", record["recordKey"]) == edited


def test_an_invalid_record_is_refused_and_nothing_is_written(project: Path) -> None:
    record = next(r for r in fixture_records() if r["kind"] == "review-thread")
    del record["comments"]
    with pytest.raises(RecordInvalidError):
        Lake(project).put(record)
    assert not any((project / ".theurian").rglob("*.json"))


def test_the_reader_reports_bad_files_by_path_and_goes_on(project: Path) -> None:
    lake = Lake(project)
    records = fixture_records()
    for record in records:
        lake.put(record)
    folder = project / ".theurian" / "review" / repository_folder(records[0]["repository"])
    (folder / "pull-request" / "PR_broken.3.json").write_bytes(b"{not json")
    (folder / "pull-request" / "PR_wrongmask.0.json").write_bytes(b"{}")
    moved = folder / "review-thread" / "PRRT_other.f.json"
    moved.write_bytes(next(folder.glob("review-thread/*.json")).read_bytes())
    (folder / "pull-request" / ".PR_x.3.json.abc.tmp").write_bytes(b"{")
    entries = {e.record_path.rsplit("/", 1)[1]: e for e in iter_records(project)}
    assert entries["PR_broken.3.json"].error is not None
    assert entries["PR_wrongmask.0.json"].error is not None
    assert entries["PRRT_other.f.json"].error is not None
    assert not any(name.endswith(".tmp") for name in entries)
    assert sum(1 for e in entries.values() if e.record is not None) == len(records)
    assert lake.sweep_temporary_files(records[0]["repository"]) == 1


def test_a_symlinked_repository_folder_escaping_the_project_is_refused(project: Path, tmp_path_factory:
                                                                       pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside")
    record = fixture_records()[0]
    review = project / ".theurian" / "review"
    review.mkdir()
    (review / repository_folder(record["repository"])).symlink_to(outside, target_is_directory=True)
    from theurian.errors import PathEscapeError

    with pytest.raises(PathEscapeError):
        Lake(project).put(record)
    assert not any(outside.iterdir())


def test_a_growing_manifest_is_checked_entry_by_entry_and_a_bad_new_entry_is_still_caught() -> None:
    from evidence.validation import validate_manifest

    manifest = orjson.loads((FIXTURE_LAKE / "runs/01K4YQ7N2B3C4D5E6F7G8H9JKM.json").read_bytes())
    good = {"kind": "pull-request", "recordKey": "PR_kwDOAcme0042", "sha256": "sha256:" + "0" * 64,
            "recordPath": f"{manifest['repositoryFolder']}/pull-request/PR_kwDOAcme0042.e3.json"}
    manifest["records"] = [good] * 3
    validate_manifest(manifest)
    manifest["records"].append({**good, "sha256": "not-a-hash"})
    with pytest.raises(RecordInvalidError):
        validate_manifest(manifest, entries_checked=3)
    manifest["records"][0] = {**good, "sha256": "not-a-hash"}
    manifest["records"][3] = good
    validate_manifest(manifest, entries_checked=3)  # entry 0 was checked when it was written, not again


def test_a_manifest_naming_another_repositorys_folder_or_listing_records_outside_its_own_is_invalid() -> None:
    """What the schema cannot say: a run is of one repository. A manifest saying otherwise would label another
    repository's folder in `review status` and date another repository's records in the store."""
    from evidence.validation import validate_manifest

    manifest = orjson.loads((FIXTURE_LAKE / "runs/01K4YQ7N2B3C4D5E6F7G8H9JKM.json").read_bytes())
    with pytest.raises(RecordInvalidError, match="repositoryFolder is not its repository's folder"):
        validate_manifest({**manifest, "repositoryFolder": repository_folder("Acme/Other")})
    own = {"kind": "pull-request", "recordKey": "PR_kwDOAcme0042", "sha256": "sha256:" + "0" * 64,
           "recordPath": f"{manifest['repositoryFolder']}/pull-request/PR_kwDOAcme0042.e3.json"}
    elsewhere = {**own, "recordPath": f"{repository_folder('Acme/Other')}/pull-request/PR_kwDOAcme0042.e3.json"}
    validate_manifest({**manifest, "records": [own, own]})
    with pytest.raises(RecordInvalidError, match="records/2 lies outside the run's repository folder"):
        validate_manifest({**manifest, "records": [own, own, elsewhere]}, entries_checked=2)


def _fixture_manifest() -> dict[str, Any]:
    manifest: dict[str, Any] = orjson.loads((FIXTURE_LAKE / "runs/01K4YQ7N2B3C4D5E6F7G8H9JKM.json").read_bytes())
    return manifest


def test_run_entries_that_are_not_regular_files_inside_the_lake_are_skipped_and_named(
        project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    import os

    lake = Lake(project)
    good = _fixture_manifest()
    lake.write_manifest(good)
    runs = project / ".theurian" / "review" / "runs"
    (runs / "01K4YQ7N2B3C4D5E6F7G8H9JK0.json").mkdir()
    outside = tmp_path_factory.mktemp("outside")
    planted = {**good, "runId": "01K4YQ7N2B3C4D5E6F7G8H9JZZ", "status": "completed",
               "window": {**good["window"], "until": "2030-01-01T00:00:00+00:00"}}
    (outside / "planted.json").write_bytes(canonical_bytes(planted))
    (runs / "01K4YQ7N2B3C4D5E6F7G8H9JZZ.json").symlink_to(outside / "planted.json")
    os.mkfifo(runs / "01K4YQ7N2B3C4D5E6F7G8H9JZY.json")  # never opened: see the FIFO test below
    scan = lake.scan_manifests()
    assert [m["runId"] for m in scan.manifests] == [good["runId"]]
    assert lake.manifests() == scan.manifests
    assert scan.unreadable == [
        ".theurian/review/runs/01K4YQ7N2B3C4D5E6F7G8H9JK0.json",
        ".theurian/review/runs/01K4YQ7N2B3C4D5E6F7G8H9JZY.json",
        ".theurian/review/runs/01K4YQ7N2B3C4D5E6F7G8H9JZZ.json",
    ]
    assert lake.last_completed_run(good["repository"]) in (None, good)


def test_a_run_entry_linked_to_a_manifest_inside_the_lake_is_read(project: Path) -> None:
    lake = Lake(project)
    good = _fixture_manifest()
    lake.write_manifest(good)
    runs = project / ".theurian" / "review" / "runs"
    copy = {**good, "runId": "01K4YQ7N2B3C4D5E6F7G8H9JZZ"}
    (project / ".theurian" / "review" / "kept.json").write_bytes(canonical_bytes(copy))
    (runs / "01K4YQ7N2B3C4D5E6F7G8H9JZZ.json").symlink_to("../kept.json")
    scan = lake.scan_manifests()
    assert [m["runId"] for m in scan.manifests] == [good["runId"], copy["runId"]] and scan.unreadable == []


def test_a_fifo_in_runs_is_never_opened(project: Path) -> None:
    import os
    import threading

    lake = Lake(project)
    lake.write_manifest(_fixture_manifest())
    fifo = project / ".theurian" / "review" / "runs" / "01K4YQ7N2B3C4D5E6F7G8H9JZY.json"
    os.mkfifo(fifo)
    opened = threading.Event()

    def writer() -> None:  # its open returns only once a reader has opened the FIFO
        descriptor = os.open(fifo, os.O_WRONLY)
        opened.set()
        os.close(descriptor)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        assert len(lake.manifests()) == 1
        assert not opened.is_set()
        assert lake.scan_manifests().unreadable == [".theurian/review/runs/01K4YQ7N2B3C4D5E6F7G8H9JZY.json"]
    finally:
        release = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer's open return
        thread.join(timeout=10)
        os.close(release)
