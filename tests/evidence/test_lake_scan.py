"""evidence.lake_scan: the policy applied to a lake in place — redact rewrites, block removes, warn and dry runs
change nothing — and the counts `review status` shows."""

from __future__ import annotations

import json
from pathlib import Path

from evidence.content_policy import ContentPolicy
from evidence.lake import Lake
from evidence.lake_read import iter_records
from evidence.lake_scan import content_counts, scan_lake
from evidence.records import repository_folder
from evidence.salt_key import SALT_FINGERPRINT_FIELD, salt_fingerprint
from tests.projection.review_records import pull_request, thread, write_lake
from tests.support.planted_secrets import PLANTED, in_prose

REPO = "Acme/Widgets"
SALT = b"k" * 32


def _lake(root: Path) -> tuple[Path, list[str]]:
    (root / ".theurian").mkdir(parents=True)
    paths = write_lake(root, [
        pull_request(REPO, 1, "PR_clean", title="clean"),
        thread(REPO, 1, "PRRT_secret", bodies=(in_prose("slack-token"), in_prose("stripe-key"))),
        thread(REPO, 1, "PRRT_hidden", bodies=("lo\u200bck",)),
    ])
    return root, paths


def _files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / ".theurian/review").rglob("*.json"))}


def test_redact_rewrites_only_the_record_holding_a_secret_and_a_second_scan_rewrites_nothing(tmp_path: Path) -> None:
    root, paths = _lake(tmp_path)
    report = scan_lake(root, ContentPolicy("redact", False, frozenset(), SALT), dry_run=False)
    assert (report.scanned, report.rewritten, report.removed) == (3, [paths[1]], [])
    assert dict(report.findings) == {"slack-token": 1, "stripe-key": 1}
    assert PLANTED["slack-token"].encode() not in b"".join(_files(root).values())
    again = scan_lake(root, ContentPolicy("redact", False, frozenset(), SALT), dry_run=False)
    assert again.rewritten == [] and again.records == []
    counts = content_counts(root, repository_folder(REPO)).as_json()
    assert counts == {"redactions": 2, "recordsWithRedactions": 1,
                      "hiddenCharacters": {"bidi-control": 0, "zero-width": 1, "tag-character": 0, "other-format": 0}}


def test_a_dry_run_and_warn_change_no_byte_and_report_what_they_found(tmp_path: Path) -> None:
    root, paths = _lake(tmp_path)
    before = _files(root)
    dry = scan_lake(root, ContentPolicy("redact", True, frozenset(), SALT), dry_run=True)
    assert len(dry.rewritten) == 3 and [r["recordPath"] for r in dry.records] == [paths[1]]
    warn = scan_lake(root, ContentPolicy("warn", False, frozenset(), SALT), dry_run=False)
    assert warn.rewritten == [] and [r["recordPath"] for r in warn.records] == [paths[1]]
    assert _files(root) == before


def test_block_removes_a_record_holding_a_secret_and_names_it(tmp_path: Path) -> None:
    root, paths = _lake(tmp_path)
    report = scan_lake(root, ContentPolicy("block", False, frozenset(), SALT), dry_run=False)
    assert report.removed == [paths[1]]
    assert sorted(e.record_path for e in iter_records(root)) == sorted([paths[0], paths[2]])


def test_an_invalid_file_is_skipped_and_named_never_rewritten(tmp_path: Path) -> None:
    root, paths = _lake(tmp_path)
    torn = root / ".theurian/review" / paths[0]
    torn.write_bytes(b'{"kind": "pull-request"')
    report = scan_lake(root, ContentPolicy("redact", True, frozenset(), SALT), dry_run=False)
    assert report.skipped == [paths[0]] and torn.read_bytes() == b'{"kind": "pull-request"'


def test_a_project_without_a_lake_scans_nothing(tmp_path: Path) -> None:
    (tmp_path / ".theurian").mkdir()
    assert scan_lake(tmp_path, ContentPolicy(salt=SALT), dry_run=False).scanned == 0


def test_a_real_scan_records_its_salt_in_each_manifest_without_one_and_leaves_a_recorded_one_alone(
        tmp_path: Path) -> None:
    root, _ = _lake(tmp_path)
    fixture = json.loads((Path(__file__).resolve().parents[2] / "fixtures/evidence/runs/"
                          "01K4YQ7N2B3C4D5E6F7G8H9JKM.json").read_text(encoding="utf-8"))
    lake = Lake(root)
    lake.write_manifest(fixture | {"runId": "01K4YQ7N2B3C4D5E6F7G8H9JK0", SALT_FINGERPRINT_FIELD: "0" * 16})
    lake.write_manifest(fixture | {"runId": "01K4YQ7N2B3C4D5E6F7G8H9JK1"})
    policy = ContentPolicy("redact", False, frozenset(), SALT)
    assert scan_lake(root, policy, dry_run=True).manifests_stamped == 0
    assert [m.get(SALT_FINGERPRINT_FIELD) for m in lake.manifests()] == ["0" * 16, None]
    assert scan_lake(root, policy, dry_run=False).manifests_stamped == 1
    assert [m[SALT_FINGERPRINT_FIELD] for m in lake.manifests()] == ["0" * 16, salt_fingerprint(SALT)]
    assert scan_lake(root, policy, dry_run=False).manifests_stamped == 0
