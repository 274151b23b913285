"""The verify-once cache the daemon owns, over real store files: one verification (and, for the review store, one
shared attachment) per file identity, a fresh one when the file changes, and nothing shared between two caches."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pytest

from projection.findings_build import build_findings_store
from projection.findings_store import STORE_KIND as FINDINGS_KIND
from projection.findings_store import FindingFilter, FindingsStoreUnavailable, read_findings
from projection.findings_store import store_path as findings_path
from projection.review_build import build_review_store
from projection.review_query import RecordFilter, read_records
from projection.review_store import ReviewStoreUnavailable, open_store, store_path
from tests.projection.git_fixture import STANDARD_HISTORY, write_history
from tests.projection.review_records import new_project, pull_request, write_lake
from theurian.installation import build_stamp_secret
from theurian.stamped_store import SETTLED_NS, VerifiedStores, file_identity


def _review_project(tmp_path: Path) -> Path:
    root = new_project(tmp_path / "p")
    write_lake(root, [pull_request("o/r", 1, "PR_first")])
    build_review_store(root)
    return root


def test_one_cache_opens_a_review_store_once_per_file_and_shares_that_attachment(tmp_path: Path) -> None:
    root = _review_project(tmp_path)
    stores = VerifiedStores()
    first = open_store(root, stores)
    assert open_store(root, stores) is first
    assert [r.record_key for r in read_records(root, RecordFilter(), 5, stores=stores)] == ["PR_first"]
    assert open_store(root, stores) is first  # the search read through the same verified attachment
    assert open_store(root, VerifiedStores()) is not first  # another daemon's cache shares nothing with this one


def test_a_rebuilt_review_store_is_verified_again_under_its_new_identity(tmp_path: Path) -> None:
    root = _review_project(tmp_path)
    stores = VerifiedStores()
    first = open_store(root, stores)
    write_lake(root, [pull_request("o/r", 2, "PR_second")])
    build_review_store(root)
    second = open_store(root, stores)
    assert second is not first and second.identity == file_identity(store_path(root))
    assert [r.record_key for r in read_records(root, RecordFilter(), 5, stores=stores)] == ["PR_first", "PR_second"]


def test_a_review_store_edited_in_place_after_it_was_verified_is_refused_by_the_same_cache(tmp_path: Path) -> None:
    root = _review_project(tmp_path)
    stores = VerifiedStores()
    first = open_store(root, stores)
    first.connection.close()  # DuckDB lets one attachment hold a file: let go of it to write it
    with duckdb.connect(str(store_path(root))) as connection:
        connection.execute("UPDATE texts SET body = 'planted'")
        connection.execute("CHECKPOINT")
    with pytest.raises(ReviewStoreUnavailable) as refused:
        open_store(root, stores)
    assert refused.value.reason == "damaged: its rows are not the rows its build stamped"


def test_one_cache_digests_a_findings_store_once_per_file_and_again_when_it_changes(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_history(root, STANDARD_HISTORY)
    build_findings_store(root)
    stores = VerifiedStores()
    path = findings_path(root)
    identity = file_identity(path)
    later = max(identity[3], identity[4]) + SETTLED_NS  # when the file's times are settled
    served = read_findings(root, FindingFilter(), 100, stores, now_ns=later)
    shelf = stores.shelf(FINDINGS_KIND)
    remembered = shelf.get(str(path), identity, build_stamp_secret())
    assert remembered is not None and remembered[0] == len(served)
    assert VerifiedStores().shelf(FINDINGS_KIND).get(str(path), identity, build_stamp_secret()) is None
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE findings SET finding_text = 'planted' WHERE position = 0")
    with pytest.raises(FindingsStoreUnavailable) as refused:
        read_findings(root, FindingFilter(), 100, stores, now_ns=later + SETTLED_NS)
    assert refused.value.reason.startswith("damaged")


def test_a_findings_store_changed_within_the_settling_time_is_digested_on_every_call(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_history(root, STANDARD_HISTORY)
    build_findings_store(root)
    stores = VerifiedStores()
    identity = file_identity(findings_path(root))
    read_findings(root, FindingFilter(), 100, stores, now_ns=max(identity[3], identity[4]) + SETTLED_NS - 1)
    assert len(stores.shelf(FINDINGS_KIND)) == 0  # its times do not yet name one content: nothing remembered
    read_findings(root, FindingFilter(), 100, stores, now_ns=max(identity[3], identity[4]) + SETTLED_NS)
    assert len(stores.shelf(FINDINGS_KIND)) == 1
