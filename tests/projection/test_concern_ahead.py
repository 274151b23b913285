"""The concern clustering formed while an incremental build takes the unchanged records over
(projection/concern_ahead.py): taken only when its input is the one the concern stage computes, so the store is the
one a build with nothing to take over makes."""

from __future__ import annotations

import shutil
from pathlib import Path

from projection.concern_ahead import ClusteringAhead, clustering_ahead
from projection.concern_reuse import input_digest
from projection.review_build import build_review_store
from projection.review_concerns import CONCERN_SIMILARITY, clustered
from projection.review_rows import STORED_FIELDS, project
from projection.review_vectors import PreviousStore
from tests.projection.review_records import new_project, settle, thread, write_lake
from tests.support.concern_set import lake_records, thread_record, threads
from tests.support.store_tables import stamped_tables
from theurian.embedding import load_model

_TEXT = "the lock is taken before the queue is drained so a retry of the request deadlocks under load"


def _fresh(root: Path, tmp_path: Path) -> dict[str, object]:
    """The tables a build of the same lake stores with no store before it to take anything over from."""
    copy = tmp_path / "fresh"
    shutil.copytree(root / ".theurian/review", copy / ".theurian/review")
    summary = build_review_store(copy)
    assert not summary.clustering_reused and not summary.clustering_ahead
    return stamped_tables(copy)


def test_a_rebuild_after_a_unit_changed_clusters_while_taking_over_and_stores_what_a_fresh_build_stores(
        tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, lake_records())
    settle(root)
    first = build_review_store(root)
    assert first.concerns > 0 and not first.clustering_ahead  # nothing taken over: nothing to cluster beside
    position, item = 3, threads()[3]
    edited = thread_record(item, position + 1, position)
    edited["comments"][0]["body"] += " (and the same again, said once more)"
    write_lake(root, [edited])  # its vector changes, so its clustering input does
    rebuilt = build_review_store(root)
    assert rebuilt.records_reused == first.records - 1
    assert rebuilt.clustering_ahead and not rebuilt.clustering_reused and rebuilt.embedded == 1
    assert "clustered while the unchanged records were taken over" in rebuilt.describe()
    assert rebuilt.concerns > 0
    assert stamped_tables(root) == _fresh(root, tmp_path)


def test_a_clustering_formed_ahead_is_given_only_for_the_input_it_was_formed_from() -> None:
    read = [project(f"t{n}.json", thread("Acme/Alpha", n, f"PRRT_{n}", bodies=(_TEXT,)), None, f"{n:064x}")
            for n in range(1, 5)]
    model = load_model()
    with clustering_ahead() as ahead:
        ahead.start(read, [], {}, PreviousStore.nothing(), model)
        made = ahead.embedded()
        stored = [made[item.content_sha256] for item in read]
        digest = input_digest(stored, CONCERN_SIMILARITY)
        found = ahead.clustering_for(digest, len(stored))
        assert found is not None
        assert found[0] == clustered(stored, model.identity.dimension)[0]
        assert ahead.clustering_for(digest, len(stored) - 1) is None
        assert ahead.clustering_for(input_digest(stored[1:], CONCERN_SIMILARITY), len(stored)) is None


def test_a_record_taken_over_without_its_words_leaves_nothing_formed_ahead() -> None:
    read = [project("t1.json", thread("Acme/Alpha", 1, "PRRT_1", bodies=(_TEXT,)), None, "1" * 64)]
    kept = [(0, *(dict.fromkeys(STORED_FIELDS, None) | {
        "record_path": "t2.json", "kind": "review-thread", "repository": "Acme/Alpha", "pull_request": 2,
        "content_sha256": "2" * 64}).values(), 0)]
    with clustering_ahead() as ahead:
        ahead.start(read, kept, {}, PreviousStore.nothing(), load_model())
        made = ahead.embedded()
        assert list(made) == [read[0].content_sha256]
        stored = [made[read[0].content_sha256]]
        assert ahead.clustering_for(input_digest(stored, CONCERN_SIMILARITY), 1) is None


def test_nothing_started_gives_nothing() -> None:
    ahead = ClusteringAhead()
    assert ahead.embedded() == {}
    assert ahead.clustering_for("digest", 0) is None
