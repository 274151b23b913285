"""Recurring concerns at build: deterministic to the byte across rebuilds and a lake copied elsewhere, stable ids as a
concern grows, distractors and one-offs never joining, the rules for what is a recurrence, and the stamp covering
both tables."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from evidence.records import content_hash
from projection.errors import LakeChangedDuringBuildError
from projection.review_build import build_review_store
from projection.review_concerns import (
    CONCERN_ID_HEX,
    CONCERN_ID_PREFIX,
    MIN_MEMBERS,
    MIN_PULL_REQUESTS,
    _Facts,
    concern_id,
)
from projection.review_rows import project
from projection.review_store import ReviewStoreUnavailable, open_store, store_path
from tests.projection.review_records import new_project, thread, write_lake
from tests.support.concern_set import labels, lake_records, threads

Rows = list[tuple[Any, ...]]


def _tables(root: Path) -> tuple[Rows, Rows]:
    cursor = open_store(root).cursor()
    concerns = cursor.execute("SELECT * FROM s.concerns ORDER BY concern_id").fetchall()
    members = cursor.execute(
        "SELECT m.concern_id, r.record_key FROM s.concern_members m JOIN s.records r USING (ordinal) "
        "ORDER BY m.concern_id, r.record_key"
    ).fetchall()
    return concerns, members


def _groups(root: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for concern, key in _tables(root)[1]:
        found.setdefault(concern, set()).add(key)
    return found


@pytest.fixture(scope="module")
def labelled_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The labelled set's lake, written once (each test builds it under its own installation)."""
    root = new_project(tmp_path_factory.mktemp("labelled") / "p")
    write_lake(root, lake_records())
    return root


@pytest.fixture
def labelled(labelled_lake: Path, tmp_path: Path) -> Path:
    root = tmp_path / "labelled"
    shutil.copytree(labelled_lake, root)
    build_review_store(root)
    return root


def test_each_concern_built_from_the_labelled_set_is_mostly_one_labelled_concern(labelled: Path) -> None:
    """Structure only: the purity and recall figures are the benchmark's (tests/benchmarks)."""
    groups = _groups(labelled)
    assert groups
    concern_of = labels()
    for keys in groups.values():
        named = [concern_of[key][0] for key in keys]
        assert max(named.count(name) for name in set(named)) * 2 > len(keys), named


def test_a_distractor_or_a_one_off_never_joins_a_concern(labelled: Path) -> None:
    concern_of = labels()
    joined = [key for keys in _groups(labelled).values() for key in keys if concern_of[key][0] is None]
    assert joined == []


def test_a_rebuild_of_the_same_lake_stores_the_same_concerns_byte_for_byte(labelled: Path, tmp_path: Path) -> None:
    before = _tables(labelled)
    copy = tmp_path / "elsewhere" / "deeper" / "p"
    shutil.copytree(labelled / ".theurian" / "review", copy / ".theurian" / "review")
    build_review_store(copy)
    assert _tables(copy) == before
    build_review_store(labelled)
    assert _tables(labelled) == before


def test_every_concern_id_is_its_anchor_s_the_member_written_first(labelled: Path) -> None:
    cursor = open_store(labelled).cursor()
    rows = cursor.execute(
        "SELECT c.concern_id, r.repository, r.record_key FROM s.concerns c JOIN s.records r "
        "ON r.ordinal = c.anchor_ordinal"
    ).fetchall()
    assert rows and all(cid == concern_id(repository, key) for cid, repository, key in rows)
    assert all(cid.startswith(CONCERN_ID_PREFIX) and len(cid) == len(CONCERN_ID_PREFIX) + CONCERN_ID_HEX
               for cid, _, _ in rows)
    order = {f"PRRT_concern_{item['id']}": position for position, item in enumerate(threads())}
    for cid, keys in _groups(labelled).items():
        anchor = min(keys, key=order.__getitem__)
        assert cid == concern_id(next(item["repository"] for item in threads()
                                      if f"PRRT_concern_{item['id']}" == anchor), anchor)


def test_a_concern_that_gains_a_later_thread_after_an_ingest_keeps_its_id(tmp_path: Path) -> None:
    lock_order = [item["id"] for item in threads() if item["concern"] == "lock-order"]
    distractors = {item["id"] for item in threads() if item["role"] != "member"}
    root = new_project(tmp_path / "p")
    write_lake(root, lake_records(set(lock_order[:3]) | distractors))
    build_review_store(root)
    [(first, keys)] = _groups(root).items()
    assert len(keys) == 3
    write_lake(root, lake_records({lock_order[3]}))  # the next ingest brings a later thread raising it again
    build_review_store(root)
    [(again, grown)] = _groups(root).items()
    assert again == first and grown == keys | {f"PRRT_concern_{lock_order[3]}"}


def test_the_same_remark_on_several_lines_of_one_pull_request_is_no_recurrence(tmp_path: Path) -> None:
    body = ("Please always take the two locks in the same order everywhere, otherwise these threads can "
            "deadlock waiting on each other.")
    root = new_project(tmp_path / "p")
    write_lake(root, [thread("acme/api", 7, f"PRRT_line{index}", bodies=(body,), path=f"src/f{index}.py")
                      for index in range(MIN_PULL_REQUESTS + 2)])
    build_review_store(root)
    assert _groups(root) == {}
    write_lake(root, [thread("acme/api", 8 + index, f"PRRT_pr{index}", bodies=(body,), path="src/g.py")
                      for index in range(MIN_PULL_REQUESTS - 1)])
    build_review_store(root)
    [keys] = _groups(root).values()
    assert len(keys) == MIN_PULL_REQUESTS + 2 + MIN_PULL_REQUESTS - 1


def test_a_remark_recurs_from_min_pull_requests_distinct_pull_requests_and_not_from_one_fewer(tmp_path: Path) -> None:
    # The edge: on MIN_PULL_REQUESTS - 1 pull requests, with MIN_MEMBERS threads on each (so the member count is
    # met and only the pull requests are short), no concern; one thread on one more pull request makes one.
    body = ("Please always take the two locks in the same order everywhere, otherwise these threads can "
            "deadlock waiting on each other.")
    root = new_project(tmp_path / "p")
    write_lake(root, [thread("acme/api", number, f"PRRT_pr{number}_{line}", bodies=(body,), path=f"src/f{line}.py")
                      for number in range(1, MIN_PULL_REQUESTS) for line in range(MIN_MEMBERS)])
    build_review_store(root)
    assert _groups(root) == {}
    write_lake(root, [thread("acme/api", MIN_PULL_REQUESTS, "PRRT_last", bodies=(body,))])
    build_review_store(root)
    [keys] = _groups(root).values()
    assert len(keys) == (MIN_PULL_REQUESTS - 1) * MIN_MEMBERS + 1
    [(pull_requests,)] = open_store(root).cursor().execute("SELECT pull_requests FROM s.concerns").fetchall()
    assert pull_requests == MIN_PULL_REQUESTS


def test_a_remark_that_says_nothing_never_forms_a_concern(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, [thread("acme/api", index, f"PRRT_lgtm{index}", bodies=("LGTM, thanks!",))
                      for index in range(1, 8)])
    build_review_store(root)
    assert _groups(root) == {}


def test_a_concern_row_edited_in_the_store_is_refused_as_damaged(labelled: Path, tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(labelled / ".theurian" / "review", root / ".theurian" / "review")
    build_review_store(root)
    live = store_path(root)
    copy = live.with_name("tampered.duckdb")
    shutil.copy(live, copy)
    with duckdb.connect(str(copy)) as connection:
        connection.execute("UPDATE concerns SET gate_passing = gate_passing + 1")
    copy.replace(live)
    with pytest.raises(ReviewStoreUnavailable) as refused:
        open_store(root)
    assert refused.value.reason.startswith("damaged")


def test_a_taken_over_member_whose_file_changed_or_vanished_during_the_build_stops_it_with_a_clear_error(
        tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    record = thread("Acme/Alpha", 1, "PRRT_taken", bodies=("take the locks in one order",))
    [relative] = write_lake(root, [record])
    lake = (root / ".theurian/review").resolve()
    data = (lake / relative).read_bytes()
    taken_over = project(relative, record, None, content_hash(data))._replace(facts=None)  # as reuse makes it
    assert _Facts([taken_over], lake).of(0).created_at is not None  # unchanged: read for its facts
    (lake / relative).write_bytes(data.replace(b"one order", b"any order"))
    with pytest.raises(LakeChangedDuringBuildError, match="changed or vanished"):
        _Facts([taken_over], lake).of(0)
    (lake / relative).unlink()
    with pytest.raises(LakeChangedDuringBuildError, match="Run `theurian review build` again"):
        _Facts([taken_over], lake).of(0)


def test_a_taken_over_member_s_facts_kept_by_the_store_it_replaces_are_used_without_reading_its_file(
        tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    record = thread("Acme/Alpha", 1, "PRRT_kept", bodies=("take the locks in one order",))
    [relative] = write_lake(root, [record])
    lake = (root / ".theurian/review").resolve()
    read = project(relative, record, None, content_hash((lake / relative).read_bytes()))
    taken_over = read._replace(facts=None)
    assert read.facts is not None
    (lake / relative).unlink()  # nothing to read: the kept facts are the ones its bytes gave
    facts = _Facts([taken_over], lake, {taken_over.content_sha256: read.facts})
    assert facts.of(0) == read.facts
    assert facts.asked == {taken_over.content_sha256: read.facts}  # and the new store keeps them again
    with pytest.raises(LakeChangedDuringBuildError):
        _Facts([taken_over], lake, {"sha256:" + "0" * 64: read.facts}).of(0)  # another file's facts are not its
