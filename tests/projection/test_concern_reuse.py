"""The concern clustering taken over from the store a build replaces (projection/concern_reuse.py): only when its
whole input is unchanged, and a build that takes it over stores exactly what a build with no store to reuse stores,
as does one that cannot."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

import projection.review_concerns as review_concerns
from projection.concern_reuse import StoredClustering, input_digest, insert_clustering, stored_clustering
from projection.review_build import BuildSummary, build_review_store
from projection.review_layout import SCHEMA
from tests.projection.review_records import new_project, review, thread, write_lake
from tests.support.concern_set import lake_records, threads
from tests.support.store_tables import stamped_tables


def _fresh(root: Path, tmp_path: Path) -> dict[str, object]:
    """The tables a build of the same lake stores with no store before it to take anything over from."""
    copy = tmp_path / "fresh"
    shutil.copytree(root / ".theurian/review", copy / ".theurian/review")
    summary = build_review_store(copy)
    assert not summary.clustering_reused and summary.reused == 0
    return stamped_tables(copy)


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, BuildSummary]:
    root = new_project(tmp_path / "p")
    write_lake(root, lake_records())
    return root, build_review_store(root)


def test_a_rebuild_of_an_unchanged_lake_takes_the_clustering_over_and_stores_what_a_fresh_build_stores(
        built: tuple[Path, BuildSummary], tmp_path: Path) -> None:
    root, first = built
    assert first.concerns > 0 and not first.clustering_reused
    again = build_review_store(root)
    assert again.clustering_reused and again.concerns == first.concerns
    assert "clustering unchanged, taken over from the store it replaces" in again.describe()
    assert stamped_tables(root) == _fresh(root, tmp_path)


def test_a_full_rebuild_takes_the_clustering_over_as_it_takes_over_the_vectors(
        built: tuple[Path, BuildSummary], tmp_path: Path) -> None:
    root, _ = built
    full = build_review_store(root, full=True)
    assert full.clustering_reused and full.records_reused == 0
    assert stamped_tables(root) == _fresh(root, tmp_path)


def test_records_that_are_no_units_shift_every_ordinal_and_the_clustering_is_still_taken_over(
        built: tuple[Path, BuildSummary], tmp_path: Path) -> None:
    root, _ = built
    repository = str(threads()[0]["repository"])
    # In the first labelled pull request, so before most units: a review and a thread that say nothing (no units).
    write_lake(root, [review(repository, 1, "PRR_nit", body="nit"),
                      thread(repository, 1, "PRRT_lgtm", bodies=("LGTM",))])
    shifted = build_review_store(root)
    assert shifted.clustering_reused
    assert stamped_tables(root) == _fresh(root, tmp_path)


def test_an_edited_unit_text_clusters_afresh_and_stores_what_a_fresh_build_stores(
        built: tuple[Path, BuildSummary], tmp_path: Path) -> None:
    root, _ = built
    record = lake_records()[1]
    record["comments"][0]["body"] += " and the lock is never released"
    write_lake(root, [record])
    edited = build_review_store(root)
    assert not edited.clustering_reused
    assert stamped_tables(root) == _fresh(root, tmp_path)


def test_another_threshold_clusters_afresh(built: tuple[Path, BuildSummary], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = built
    monkeypatch.setattr(review_concerns, "CONCERN_SIMILARITY", 0.44)
    tighter = build_review_store(root)
    assert not tighter.clustering_reused
    assert stamped_tables(root) == _fresh(root, tmp_path)


def test_the_input_digest_changes_with_any_vector_their_order_their_count_and_the_threshold() -> None:
    stored = ["AAAA", "AAAB", "AAAC"]
    base = input_digest(stored, 0.34)
    assert input_digest(list(stored), 0.34) == base
    others = {input_digest(["AAAA", "AAAB", "AAAD"], 0.34), input_digest(["AAAB", "AAAA", "AAAC"], 0.34),
              input_digest(stored[:2], 0.34), input_digest(stored, 0.36), input_digest(["AAAAAAAB", "AAAC"], 0.34)}
    assert base not in others and len(others) == 5


def _kept(rows: list[tuple[int, int]], units: int = 5) -> StoredClustering | None:
    with duckdb.connect(":memory:") as connection:
        connection.execute(SCHEMA)
        insert_clustering(connection, StoredClustering("digest", units, []))
        for cluster, unit in rows:
            connection.execute("INSERT INTO concern_clusters VALUES (?, ?)", [cluster, unit])
        return stored_clustering(connection, "")


def test_kept_clusters_are_read_back_as_the_clustering_returned_them() -> None:
    kept = _kept([(0, 0), (0, 3), (1, 1), (1, 2), (1, 4)])
    assert kept == StoredClustering("digest", 5, [[0, 3], [1, 2, 4]])
    assert kept.reusable_for("digest", 5) and not kept.reusable_for("digest", 6)
    assert not kept.reusable_for("other", 5)
    assert _kept([]) == StoredClustering("digest", 5, [])


@pytest.mark.parametrize("rows", [
    [(0, 0), (0, 5)],  # a unit past the count
    [(0, 0), (0, -1)],  # a negative unit
    [(0, 0)],  # a cluster of one
    [(0, 0), (0, 1), (1, 1), (1, 2)],  # a unit in two clusters
    [(0, 2), (0, 3), (1, 0), (1, 1)],  # clusters out of their order
])
def test_kept_clusters_the_clustering_could_not_have_returned_are_never_taken_over(
        rows: list[tuple[int, int]]) -> None:
    assert _kept(rows) is None
