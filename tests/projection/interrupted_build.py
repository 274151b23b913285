"""For the tests of a build stopped part way (a failure, a Ctrl-C): a project whose store holds one record, and the
check that such a build left that store serving, no thread of its own behind and no building folder."""

from __future__ import annotations

import threading
from pathlib import Path

from projection.review_build import build_review_store
from projection.review_query import RecordFilter, read_records
from projection.review_store import store_path
from tests.projection.review_records import new_project, pull_request, write_lake


def built_with_one_record(tmp_path: Path) -> Path:
    """A project whose store holds the one record PR_old."""
    root = new_project(tmp_path / "p")
    write_lake(root, [pull_request("Acme/Alpha", 1, "PR_old", body="the old store")])
    build_review_store(root)
    return root


def assert_old_store_serves(root: Path, thread_prefix: str) -> None:
    """The store still serves PR_old alone; no thread named `thread_prefix`… runs; no building folder is left."""
    assert [r.record_key for r in read_records(root, RecordFilter(), 10)] == ["PR_old"]
    assert not [t for t in threading.enumerate() if t.name.startswith(thread_prefix)]
    assert [p.name for p in store_path(root).parent.iterdir() if p.name.endswith(".building")] == []
