"""What a search keeps in memory: the per-build cache at its bound, the shared top-k selection, the dense floor,
and the integrity counts remembered per settled state file."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import numpy

from knowledge.dense import DenseVectors, dense_channel
from knowledge.in_memory import CACHED_INDEXES, BuildCache, top_rows
from knowledge.state import create_database
from knowledge.state_stamp import stamp_state, verified_damage
from theurian.embedding import ModelIdentity
from theurian.installation import build_stamp_secret
from theurian.stamped_store import SETTLED_NS, Identity, VerifiedStores, file_identity


def test_the_build_cache_keeps_exactly_its_bound_and_drops_the_least_recently_used() -> None:
    cache: BuildCache[int] = BuildCache()
    loads: list[str] = []

    def load(name: str) -> int:
        loads.append(name)
        return len(loads)

    for n in range(CACHED_INDEXES):
        cache.get(f"build-{n}", "digest", lambda n=n: load(f"build-{n}"))
    for n in range(CACHED_INDEXES):  # all still held: nothing is loaded again
        cache.get(f"build-{n}", "digest", lambda n=n: load(f"again-{n}"))
    assert loads == [f"build-{n}" for n in range(CACHED_INDEXES)]
    cache.get("one-past", "digest", lambda: load("one-past"))  # evicts build-0, the least recently used
    cache.get("build-0", "digest", lambda: load("build-0 reloaded"))
    cache.get(f"build-{CACHED_INDEXES - 1}", "digest", lambda: load("never"))
    assert loads[CACHED_INDEXES:] == ["one-past", "build-0 reloaded"]
    cache.get("build-0", "other digest", lambda: load("another digest"))
    assert loads[-1] == "another digest"


def test_top_rows_is_a_full_sort_cut_to_depth_with_ties_by_row() -> None:
    chooser = numpy.random.default_rng(3)
    score = numpy.round(chooser.random(500), 1)  # many ties, some across the cut
    candidates = numpy.flatnonzero(score > 0.2)
    full = sorted(candidates.tolist(), key=lambda row: (-score[row], row))
    for depth in (1, 7, 50, len(candidates) - 1, len(candidates), len(candidates) + 1):
        assert top_rows(candidates, score, depth).tolist() == full[:depth]


def test_the_dense_floor_admits_a_cosine_exactly_at_it_and_not_one_below() -> None:
    floor = 0.5
    matrix = numpy.array([[floor, numpy.sqrt(1 - floor**2)], [0.4999, numpy.sqrt(1 - 0.4999**2)], [1.0, 0.0]],
                         dtype=numpy.float32)
    vectors = DenseVectors(ModelIdentity("m", 2, "0" * 64), ("at", "below", "best"), matrix, "digest")
    query = numpy.array([1.0, 0.0], dtype=numpy.float32)
    assert dense_channel(vectors, query, 10, float(matrix[0, 0])) == ["best", "at"]
    assert dense_channel(vectors, query, 1, float(matrix[0, 0])) == ["best"]


def _state(path: Path) -> sqlite3.Connection:
    connection = create_database(path, "p")
    connection.execute("INSERT INTO project_integrity VALUES ('p', 0)")
    stamp_state(connection, build_stamp_secret())
    connection.execute("COMMIT")
    return connection


def _aged(identity: Identity, age_ns: int) -> Identity:
    then = time.time_ns() - age_ns
    return (*identity[:3], then, then)


def test_integrity_counts_are_remembered_only_for_a_settled_state_file(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    connection = _state(path)
    stores = VerifiedStores()
    real = file_identity(path)
    settled = _aged(real, SETTLED_NS + 10**9)
    assert verified_damage(stores, path, settled, connection, "p", 0) is False
    connection.execute("INSERT INTO knowledge_items (project_id, item_id, kind, namespace, owner, status, "
                       "trust_level, sensitivity, labels, scope_paths) VALUES ('p', 'x', 'api', 'n', 'o', "
                       "'approved', 'reviewed', 'public', '[]', '[]')")
    assert verified_damage(stores, path, settled, connection, "p", 0) is False  # the same file: remembered
    fresh = _aged(real, SETTLED_NS - 10**9)  # changed within the settling time: counted on every call
    assert verified_damage(stores, path, fresh, connection, "p", 0) is True
    assert verified_damage(stores, path, _aged(real, SETTLED_NS + 2 * 10**9), connection, "p", 0) is True  # another
