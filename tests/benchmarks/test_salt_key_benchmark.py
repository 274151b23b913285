"""Printed figures for finding which salt keyed the lake (not run by default: `make benchmark`): `lake_key`, and the
questions an ingest asks of the run manifests before its first request (`ingest.run.RepositoryRun`: the lake's
salt, this repository's last completed run, the withheld list it carries on), over a lake whose first, full run
listed SALT_BENCHMARK_ENTRIES records (default 100,000) and whose later incremental runs listed a few each. Nothing
here asserts a time.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from ulid import ULID

from evidence.lake import Lake, last_completed
from evidence.records import canonical_bytes
from evidence.salt_key import key_of, lake_key
from ingest.run import manifests_needed
from ingest.withheld import carried
from tests.support.run_manifests import run_manifest
from theurian.project import REVIEW_DIR

ENTRIES = int(os.environ.get("SALT_BENCHMARK_ENTRIES", "100000"))
LATER_RUNS = 20  # incremental runs after the full one, a few records each
REPOSITORY = "Bench/Repo"
FINGERPRINT = "0123456789abcdef"
_RUNS = 3


def _lake(root: Path) -> None:
    runs = root / REVIEW_DIR / "runs"
    runs.mkdir(parents=True)
    ids = sorted(str(ULID()) for _ in range(LATER_RUNS + 1))
    for index, run_id in enumerate(ids):
        # As every run since session 12 writes them: the salt's fingerprint and the withheld list (empty).
        manifest = run_manifest(run_id, REPOSITORY, entries=ENTRIES if index == 0 else 5, fingerprint=FINGERPRINT,
                                withheld=[])
        (runs / f"{run_id}.json").write_bytes(canonical_bytes(manifest))


def _best(action: Callable[[], object]) -> float:
    """The least CPU time of _RUNS runs, in seconds (CPU, not wall: the machine is shared)."""
    samples = []
    for _ in range(_RUNS):
        gc.collect()
        started = time.process_time()
        action()
        samples.append(time.process_time() - started)
    return min(samples)


@pytest.mark.benchmark
def test_salt_key_figures(tmp_path: Path) -> None:
    _lake(tmp_path)
    lake = Lake(tmp_path)
    assert lake_key(tmp_path) is not None and lake_key(tmp_path).fingerprint == FINGERPRINT  # type: ignore[union-attr]
    key = _best(lambda: lake_key(tmp_path))
    def every_manifest() -> object:  # what an ingest read before `manifests_needed`
        manifests = lake.manifests()
        runs = lake.repository_runs(REPOSITORY, manifests)
        return key_of(manifests), last_completed(runs), carried(runs)

    def needed() -> object:
        manifests = manifests_needed(lake, REPOSITORY)
        runs = lake.repository_runs(REPOSITORY, manifests)
        return key_of(manifests), last_completed(runs), carried(runs)

    assert needed() == every_manifest()
    whole, ingest = _best(every_manifest), _best(needed)
    every = _best(lambda: key_of(lake.manifests()))
    print(f"\nthe lake's salt key over {LATER_RUNS + 1} run manifests listing {ENTRIES + 5 * LATER_RUNS} entries "
          f"(CPU seconds, best of {_RUNS})")
    print(f"  lake_key {key:6.3f} s (every manifest read: {every:6.3f} s)")
    print(f"  an ingest's questions (salt, last completed run, withheld list) {ingest:6.3f} s "
          f"(every manifest read: {whole:6.3f} s)")
