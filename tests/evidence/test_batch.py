"""Group commit: staged records are invisible until commit, durable before they are renamed into place, and a
SIGKILL at any point leaves every record file whole."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

import evidence.batch
from evidence.batch import RecordBatch
from evidence.errors import RecordInvalidError
from evidence.lake import Lake, Outcome
from evidence.lake_read import iter_records
from evidence.records import canonical_bytes
from tests.evidence.sample_lake import fixture_records

REPO_ROOT = Path(__file__).resolve().parents[2]


def lake_files(project: Path) -> dict[str, bytes]:
    review = project / ".theurian" / "review"
    return {str(p.relative_to(review)): p.read_bytes() for p in sorted(review.rglob("*")) if p.is_file()}


def test_staged_records_are_invisible_until_commit_then_all_in_place(project: Path) -> None:
    lake, records = Lake(project), fixture_records()
    with RecordBatch(lake) as batch:
        results = [batch.put(r) for r in records]
        assert [r.outcome for r in results] == [Outcome.CREATED] * len(records)
        assert list(iter_records(project)) == []
        assert all(lake.load(r["repository"], r["kind"], r["recordKey"]) is None for r in records)
        assert batch.load(records[0]["repository"], records[0]["kind"], records[0]["recordKey"]) == records[0]
    entries = list(iter_records(project))
    assert [e.error for e in entries] == [None] * len(records)
    for result, record in zip(results, records, strict=True):
        assert (project / ".theurian" / "review" / result.record_path).read_bytes() == canonical_bytes(record)
    assert not any(name.endswith(".tmp") for name in lake_files(project))


def test_unchanged_records_stage_nothing_and_keep_their_files(project: Path) -> None:
    lake, records = Lake(project), fixture_records()
    for record in records:
        lake.put(record)
    before = {p: p.stat().st_mtime_ns for p in (project / ".theurian" / "review").rglob("*.json")}
    edited = records[0] | {"sourceUri": records[0]["sourceUri"] + "#edited"}
    with RecordBatch(lake) as batch:
        outcomes = [batch.put(r).outcome for r in [edited, *records[1:]]]
        assert len(batch) == 1
    assert outcomes == [Outcome.UPDATED] + [Outcome.UNCHANGED] * (len(records) - 1)
    after = {p: p.stat().st_mtime_ns for p in before}
    changed = [p for p in before if after[p] != before[p]]
    assert [p.read_bytes() for p in changed] == [canonical_bytes(edited)]


def test_a_second_put_in_one_batch_compares_with_the_first_and_the_last_one_lands(project: Path) -> None:
    lake, record = Lake(project), fixture_records()[0]
    edited = record | {"sourceUri": record["sourceUri"] + "#2"}
    with RecordBatch(lake) as batch:
        assert batch.put(record).outcome is Outcome.CREATED
        assert batch.put(dict(record)).outcome is Outcome.UNCHANGED
        assert batch.put(edited).outcome is Outcome.UPDATED
        assert len(batch) == 1
    assert lake.load(record["repository"], record["kind"], record["recordKey"]) == edited
    assert sum(1 for name in lake_files(project) if name.endswith(".tmp")) == 0
    path = project / ".theurian" / "review" / lake.record_path(record["repository"], record["kind"],
                                                               record["recordKey"])
    mtime = path.stat().st_mtime_ns
    with RecordBatch(lake) as batch:
        assert batch.put(record).outcome is Outcome.UPDATED
        assert batch.put(edited).outcome is Outcome.UPDATED
        assert len(batch) == 0  # back to the bytes on disk: nothing to rewrite
    assert path.stat().st_mtime_ns == mtime and path.read_bytes() == canonical_bytes(edited)


def test_marking_missing_in_a_batch_keeps_the_record_and_the_first_run_that_missed_it(project: Path) -> None:
    lake, record = Lake(project), fixture_records()[0]
    lake.put(record)
    key = (record["repository"], record["kind"], record["recordKey"])
    with RecordBatch(lake) as batch:
        assert batch.mark_missing(*key, "01K4YQ7N2B3C4D5E6F7G8H9JKA")
        assert not batch.mark_missing(*key, "01K4YQ7N2B3C4D5E6F7G8H9JKB")
        assert not batch.mark_missing(record["repository"], record["kind"], "PR_absent", "01K4YQ7N2B3C4D5E6F7G8H9JKA")
    assert lake.load(*key) == record | {"missingUpstreamSince": "01K4YQ7N2B3C4D5E6F7G8H9JKA"}


def test_a_block_that_raises_leaves_the_lake_as_it_was_and_no_temp_file(project: Path) -> None:
    lake, records = Lake(project), fixture_records()
    lake.put(records[0])
    before = lake_files(project)
    invalid = dict(next(r for r in records if r["kind"] == "review-thread"))
    del invalid["comments"]
    with pytest.raises(RecordInvalidError), RecordBatch(lake) as batch:
        batch.put(records[0] | {"sourceUri": "https://github.com/changed"})
        batch.put(records[2])
        batch.put(invalid)
    assert lake_files(project) == before


def test_every_temp_file_is_fsynced_before_the_first_rename_and_each_folder_once_after_the_last(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lake, records = Lake(project), fixture_records()
    for record in records:  # the folders exist: their creation is not part of a page's commit
        lake.put(record)
    edited = [r | {"sourceUri": r["sourceUri"] + "#edited"} for r in records]
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def spy_fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def spy_replace(source: str, target: str | Path) -> None:
        events.append(("replace", str(target)))
        real_replace(source, target)

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to name an fsynced descriptor")
    monkeypatch.setattr(os, "fsync", spy_fsync)
    monkeypatch.setattr(os, "replace", spy_replace)
    with RecordBatch(lake) as batch:
        for record in edited:
            batch.put(record)
    kinds = [kind for kind, _ in events]
    renames = len(records)
    folders = {str((project / ".theurian" / "review" / lake.record_path(
        r["repository"], r["kind"], r["recordKey"])).parent) for r in records}
    assert kinds == ["fsync"] * renames + ["replace"] * renames + ["fsync"] * len(folders)
    assert all(target.endswith(".tmp") for _, target in events[:renames])
    assert {target for _, target in events[-len(folders):]} == folders


def test_a_huge_page_keeps_a_bounded_number_of_files_open(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("counts open descriptors through /proc")
    monkeypatch.setattr(evidence.batch, "OPEN_FILES_BOUND", 4)
    lake, template = Lake(project), next(r for r in fixture_records() if r["kind"] == "review-submission")
    baseline = len(os.listdir("/proc/self/fd"))
    peak = 0
    with RecordBatch(lake) as batch:
        for index in range(40):
            batch.put(template | {"recordKey": f"PRR_many{index:03d}"})
            peak = max(peak, len(os.listdir("/proc/self/fd")) - baseline)
    assert peak <= 4
    assert len(Lake(project).record_keys(template["repository"], "review-submission")) == 40


KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
import orjson
from evidence.batch import RecordBatch
from evidence.lake import Lake

project, kill_after = Path(sys.argv[1]), int(sys.argv[2])
records = [orjson.loads(line) for line in sys.stdin.buffer.read().splitlines()]
real_replace, done = os.replace, []

def replace_then_maybe_die(source, target):
    if len(done) == kill_after:
        os.kill(os.getpid(), signal.SIGKILL)
    real_replace(source, target)
    done.append(target)

os.replace = replace_then_maybe_die
with RecordBatch(Lake(project)) as batch:
    for record in records:
        batch.put(record)
"""


@pytest.mark.parametrize("kill_after", [0, 1, 3, 5])
def test_a_sigkill_between_renames_leaves_every_file_old_or_new_and_a_rerun_converges(
        project: Path, kill_after: int) -> None:
    lake, records = Lake(project), fixture_records()
    for record in records:
        lake.put(record)
    old = {name: data for name, data in lake_files(project).items() if not name.startswith("runs/")}
    edited = [r | {"sourceUri": r["sourceUri"] + "#edited"} for r in records]
    payload = b"\n".join(orjson.dumps(r) for r in edited)
    child = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(project), str(kill_after)], input=payload,
                           cwd=REPO_ROOT, capture_output=True, timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    new = {lake.record_path(r["repository"], r["kind"], r["recordKey"]): canonical_bytes(r) for r in edited}
    seen = {name: data for name, data in lake_files(project).items() if not name.endswith(".tmp")}
    assert [e.error for e in iter_records(project) if e.error] == []
    assert sum(1 for name in seen if seen[name] == new[name]) == kill_after
    assert all(seen[name] in (old[name], new[name]) for name in new)
    assert lake.sweep_temporary_files(records[0]["repository"]) == len(records) - kill_after
    with RecordBatch(lake) as batch:
        for record in edited:
            batch.put(record)
    assert lake_files(project) == new


def test_a_full_disk_under_the_lake_names_the_record_and_its_folder_not_the_temp(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Said before: "cannot write a file: no space left on the device" (os.write names no file).
    from theurian.disk_faults import storage_fault_text

    made = evidence.batch.tempfile.mkstemp

    def full(*args: object, **kwargs: object) -> tuple[int, str]:
        fd, name = made(*args, **kwargs)  # type: ignore[call-overload]
        device = os.open("/dev/full", os.O_WRONLY)
        os.dup2(device, fd)  # the temp file's writes go to a device that answers each with ENOSPC
        os.close(device)
        return fd, name

    monkeypatch.setattr(evidence.batch.tempfile, "mkstemp", full)
    record = fixture_records()[0]
    with pytest.raises(OSError) as raised, RecordBatch(Lake(project)) as batch:
        batch.put(record)
    text = storage_fault_text(raised.value)
    assert text is not None
    review = re.escape(f"{project}/.theurian/review/")
    assert re.fullmatch(rf"cannot write [^/ ]+\.json in {review}[^ ]+/: no space left on the device; free space there "
                        r"\(`df -h [^`]+` shows what is left\), then run the command again", text), text
