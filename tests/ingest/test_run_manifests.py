"""What a run reads of the lake's run manifests before its first request (`ingest.run.manifests_needed`): newest
first and no further back than its three questions need, with the answers every manifest would give."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evidence.lake import Lake, last_completed
from evidence.records import canonical_bytes
from evidence.salt_key import LakeKey, key_of, lake_key
from ingest.run import manifests_needed
from ingest.withheld import carried
from tests.support.run_manifests import run_manifest
from theurian.project import REVIEW_DIR

ALPHA, BETA, GAMMA = "Acme/Alpha", "Acme/Beta", "Acme/Gamma"
WITHHELD = [{"number": 7, "firstRun": "01K4YQ7N2B3C4D5E6F7G8H9J03", "records": 1,
             "findings": [{"type": "github-token", "fingerprint": "00112233445566aa"}]}]


def _lake(root: Path, manifests: list[dict[str, Any]]) -> Lake:
    runs = root / REVIEW_DIR / "runs"
    runs.mkdir(parents=True)
    for manifest in manifests:
        (runs / f"{manifest['runId']}.json").write_bytes(canonical_bytes(manifest))
    return Lake(root)


def _answers(lake: Lake, repository: str, manifests: list[dict[str, Any]]) -> tuple[object, ...]:
    runs = lake.repository_runs(repository, manifests)
    return key_of(manifests), last_completed(runs), carried(runs)


def _history(root: Path) -> Lake:
    """Oldest first: an Alpha run from before fingerprints, Alpha's full run listing many records, a Beta run, an
    Alpha run killed while running (it carries a withheld list), a newest Beta run after a re-key, and bytes in a
    manifest's place (skipped, as every reader skips it)."""
    lake = _lake(root, [
        run_manifest("01K4YQ7N2B3C4D5E6F7G8H9J00", ALPHA, entries=3),
        run_manifest("01K4YQ7N2B3C4D5E6F7G8H9J01", ALPHA, entries=500, fingerprint="aaaaaaaaaaaaaaaa", withheld=[]),
        run_manifest("01K4YQ7N2B3C4D5E6F7G8H9J02", BETA, fingerprint="aaaaaaaaaaaaaaaa", withheld=[]),
        run_manifest("01K4YQ7N2B3C4D5E6F7G8H9J03", ALPHA, status="running", fingerprint="aaaaaaaaaaaaaaaa",
                     withheld=WITHHELD),
        run_manifest("01K4YQ7N2B3C4D5E6F7G8H9J04", BETA, fingerprint="bbbbbbbbbbbbbbbb", withheld=[]),
    ])
    (root / REVIEW_DIR / "runs" / "01K4YQ7N2B3C4D5E6F7G8H9J05.json").write_bytes(b"{not json")
    return lake


def test_a_run_reads_back_only_to_its_repositorys_last_completed_run_and_answers_as_every_manifest_would(
        tmp_path: Path) -> None:
    lake = _history(tmp_path)
    every = lake.manifests()
    needed = manifests_needed(lake, ALPHA)
    assert len(every) == 5 and needed == every[1:]  # the oldest run, older than every answer, is not read
    assert _answers(lake, ALPHA, needed) == _answers(lake, ALPHA, every)
    key, completed, withheld = _answers(lake, ALPHA, needed)
    assert key == LakeKey("bbbbbbbbbbbbbbbb", "01K4YQ7N2B3C4D5E6F7G8H9J04")
    assert completed is not None and completed["runId"] == "01K4YQ7N2B3C4D5E6F7G8H9J01"
    assert withheld == WITHHELD


def test_a_repository_the_lake_has_no_run_of_reads_every_manifest(tmp_path: Path) -> None:
    lake = _history(tmp_path)
    assert manifests_needed(lake, GAMMA) == lake.manifests()
    assert _answers(lake, GAMMA, manifests_needed(lake, GAMMA))[1:] == (None, [])


def test_the_lakes_key_is_its_newest_valid_manifest_recording_one_read_newest_first(tmp_path: Path) -> None:
    lake = _history(tmp_path)
    assert lake_key(tmp_path) == key_of(lake.manifests()) == LakeKey("bbbbbbbbbbbbbbbb", "01K4YQ7N2B3C4D5E6F7G8H9J04")
    assert lake_key(tmp_path / "nowhere") is None
