"""evidence.lake_damage: a record file the lake's reader refuses, or whose bytes are not those the newest run
listing it recorded, is damaged; so is a manifest the reader skips; a file vouched for by identity is judged
unread; a policy `review scan` applies is no damage."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from evidence import lake_scan
from evidence.content_policy import ContentPolicy
from evidence.lake import Lake
from evidence.lake_damage import NOT_AS_RECORDED, SCAN_STOPPED, damaged_manifests, damaged_records
from evidence.lake_listing import scan_records
from evidence.lake_scan import scan_lake
from evidence.records import content_hash, repository_folder
from tests.projection.review_records import pull_request, thread, write_lake
from tests.support.planted_secrets import in_prose
from theurian.cli.lake_damage_words import cure
from theurian.project import SCAN_JOURNAL_NAME, STATE_DIR

REPO = "Acme/Widgets"
REDACT = ContentPolicy("redact", False, frozenset(), b"k" * 32)
FIXTURE_RUN = Path(__file__).resolve().parents[2] / "fixtures/evidence/runs/01K4YQ7N2B3C4D5E6F7G8H9JKM.json"


def _lake(root: Path) -> list[str]:
    (root / ".theurian").mkdir(parents=True)
    paths = write_lake(root, [pull_request(REPO, 1, "PR_one", title="one"),
                              thread(REPO, 1, "PRRT_secret", bodies=(in_prose("slack-token"),)),
                              thread(REPO, 1, "PRRT_plain", bodies=("plain",))])
    review = root / ".theurian/review"
    listed = [{"kind": path.split("/")[1], "recordKey": path.split("/")[2].split(".")[0], "recordPath": path,
               "sha256": content_hash((review / path).read_bytes())} for path in paths[:2]]  # the third unlisted
    fixture = json.loads(FIXTURE_RUN.read_text(encoding="utf-8"))
    Lake(root).write_manifest(fixture | {"runId": "01K4YQ7N2B3C4D5E6F7G8H9JK1", "repository": REPO,
                                         "repositoryFolder": repository_folder(REPO), "records": listed})
    return paths


def _damage(root: Path, **options: Any) -> list[tuple[str, str]]:
    found = damaged_records(root, Lake(root).manifests(), **options)
    return [(item.path, item.reason) for item in found]


def test_a_whole_lake_has_no_damage_and_an_unlisted_or_deleted_record_is_none(tmp_path: Path) -> None:
    paths = _lake(tmp_path)
    assert _damage(tmp_path) == []
    (tmp_path / ".theurian/review" / paths[0]).unlink()  # the documented cure for leaked content
    assert _damage(tmp_path) == []


def test_a_truncated_record_and_a_valid_record_edited_since_its_run_are_damaged(tmp_path: Path) -> None:
    paths = _lake(tmp_path)
    review = tmp_path / ".theurian/review"
    data = (review / paths[0]).read_bytes()
    (review / paths[0]).write_bytes(data[:40])
    (review / paths[1]).write_bytes((review / paths[1]).read_bytes() + b"\n")  # still valid JSON and schema
    (review / paths[2]).write_bytes((review / paths[2]).read_bytes() + b"\n")  # no run recorded its bytes
    assert _damage(tmp_path) == [(f".theurian/review/{paths[0]}", "unreadable: JSONDecodeError"),
                                 (f".theurian/review/{paths[1]}", NOT_AS_RECORDED)]
    [folder] = {item.folder for item in damaged_records(tmp_path, Lake(tmp_path).manifests())}
    assert folder == paths[0].split("/")[0]


def test_a_file_vouched_for_by_its_identity_is_judged_by_the_vouched_hash_unread(tmp_path: Path) -> None:
    paths = _lake(tmp_path)
    review = tmp_path / ".theurian/review"
    (review / paths[0]).write_bytes(b"{")  # broken, but vouched for below as the bytes it had
    entries, _ = scan_records(tmp_path, identities=True)
    identity = {entry.relative: entry.identity for entry in entries}
    recorded = {listed["recordPath"]: listed["sha256"] for listed in Lake(tmp_path).manifests()[0]["records"]}
    vouched = {path: (identity[path], recorded[path]) for path in paths[:2]}
    assert _damage(tmp_path, entries=entries, vouched=vouched) == []  # not read: its identity is the vouched one
    vouched[paths[1]] = (identity[paths[1]], "sha256:" + "0" * 64)
    assert _damage(tmp_path, entries=entries, vouched=vouched) == [(f".theurian/review/{paths[1]}", NOT_AS_RECORDED)]
    os.utime(review / paths[0], ns=(1, 1))  # another identity: read again, and found broken
    assert _damage(tmp_path, vouched={paths[0]: vouched[paths[0]]})[0][0] == f".theurian/review/{paths[0]}"


def test_a_record_review_scan_rewrites_is_not_damage(tmp_path: Path) -> None:
    _lake(tmp_path)
    report = scan_lake(tmp_path, ContentPolicy("redact", False, frozenset(), b"k" * 32), dry_run=False)
    assert report.rewritten  # the secret was redacted: the file's bytes are not the run's any more
    assert _damage(tmp_path) == []


def _interrupted_after_the_rewrite(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan stopped (Ctrl-C) right after it replaced a record, before the manifests recorded its new bytes."""
    real = lake_scan.write_bytes_durably

    def replaced_then_stopped(path: Path, data: bytes) -> None:
        real(path, data)
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(lake_scan, "write_bytes_durably", replaced_then_stopped)
        with pytest.raises(KeyboardInterrupt):
            scan_lake(root, REDACT, dry_run=False)


def test_a_record_a_stopped_scan_rewrote_reads_as_damage_only_until_the_next_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifests learn a rewrite's hash at the scan's end: a scan stopped part way left every record it had
    rewritten as damage, and a second scan, finding them already screened, recorded none of them."""
    paths = _lake(tmp_path)
    _interrupted_after_the_rewrite(tmp_path, monkeypatch)
    # Named as what it is, so its cure is the next scan rather than a full ingest (`lake_damage.scan_cure`).
    assert _damage(tmp_path) == [(f".theurian/review/{paths[1]}", SCAN_STOPPED)]
    [found] = damaged_records(tmp_path, Lake(tmp_path).manifests())
    assert cure(found, tmp_path, {}, set()) == f"`theurian review scan --project {tmp_path}`"
    again = scan_lake(tmp_path, REDACT, dry_run=False)
    assert again.rewritten == []  # nothing left to redact: the stopped scan did it
    assert _damage(tmp_path) == []
    assert not (tmp_path / STATE_DIR / SCAN_JOURNAL_NAME).exists()


def test_a_record_changed_since_the_stopped_scan_rewrote_it_stays_damage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The journal vouches for the bytes the scan wrote, not for whatever the file holds now."""
    paths = _lake(tmp_path)
    _interrupted_after_the_rewrite(tmp_path, monkeypatch)
    record = tmp_path / ".theurian/review" / paths[1]
    record.write_bytes(record.read_bytes() + b"\n")  # edited by hand after the stop: valid, not the scan's
    assert _damage(tmp_path) == [(f".theurian/review/{paths[1]}", NOT_AS_RECORDED)]  # not the scan's bytes
    scan_lake(tmp_path, REDACT, dry_run=False)
    assert _damage(tmp_path) == [(f".theurian/review/{paths[1]}", NOT_AS_RECORDED)]


def test_a_manifest_the_reader_skips_is_damaged(tmp_path: Path) -> None:
    _lake(tmp_path)
    [manifest] = (tmp_path / ".theurian/review/runs").iterdir()
    manifest.write_bytes(manifest.read_bytes()[:30])
    [item] = damaged_manifests(Lake(tmp_path).scan_manifests())
    assert (item.path, item.reason, item.folder) == (f".theurian/review/runs/{manifest.name}",
                                                     "unreadable: JSONDecodeError", None)
