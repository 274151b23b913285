"""A store whose values have a type its build never writes is a damaged store: the reader answers its one
"unavailable" exception, never a TypeError or any other internal fault."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import duckdb
import pytest

from projection.errors import FindingsStoreUnavailable, ReviewStoreUnavailable
from projection.findings_build import build_findings_store
from projection.findings_store import STORE_RELATIVE as FINDINGS_RELATIVE
from projection.findings_store import FindingFilter, read_findings
from projection.review_build import build_review_store
from projection.review_query import RecordFilter, read_records
from projection.review_store import store_path
from tests.projection.git_fixture import STANDARD_HISTORY, write_history
from tests.projection.review_records import copy_fixture_lake, new_project


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("faults") / "repo"
    write_history(root, STANDARD_HISTORY)
    return root


@pytest.mark.parametrize("statement", [
    "UPDATE findings SET position = 1.5 WHERE position = 1",
    "UPDATE findings SET finding_text = x'ff00' WHERE position = 0",
    "UPDATE findings SET finding_folded = x'00' WHERE position = 0",
    "UPDATE findings SET committed_at = 2.5 WHERE position = 0",
    "UPDATE findings SET pull_request = 0.25",
    "UPDATE findings SET family = x''",
    "UPDATE findings SET finding_text = CAST(x'ff' AS TEXT) WHERE position = 0",
    "UPDATE build_stamp SET row_count = x'01'",
    "UPDATE build_stamp SET row_count = 1.5",
    "UPDATE build_stamp SET stamp = x'00'",
])
def test_a_findings_value_of_a_type_the_build_never_writes_is_unavailable(
    history: Path, statement: str
) -> None:
    build_findings_store(history)
    with sqlite3.connect(history / FINDINGS_RELATIVE) as connection:
        connection.execute(statement)
    with pytest.raises(FindingsStoreUnavailable):
        read_findings(history, FindingFilter(), 100)
    with pytest.raises(FindingsStoreUnavailable):
        read_findings(history, FindingFilter(q_folded="a"), 100)


def _built_review_store(tmp_path: Path) -> Path:
    root = new_project(tmp_path / "p")
    copy_fixture_lake(root)
    build_review_store(root)
    return root


@pytest.mark.parametrize("statements", [
    ["ALTER TABLE texts ALTER body TYPE BLOB USING encode(body)"],
    ["ALTER TABLE records ALTER pull_request TYPE DECIMAL(20, 0)"],
    ["ALTER TABLE records ALTER pull_request TYPE HUGEINT",
     "UPDATE records SET pull_request = 170141183460469231731687303715884105727 WHERE ordinal = 0"],
    ["ALTER TABLE records ALTER last_seen_at TYPE INTERVAL USING INTERVAL 1 DAY"],
    ["ALTER TABLE word_blocks ALTER block TYPE DOUBLE", "UPDATE word_blocks SET block = block + 0.5"],
    ["ALTER TABLE records ALTER lead_position TYPE DOUBLE", "UPDATE records SET lead_position = 0.5"],
    ["ALTER TABLE records ALTER thread_state DROP NOT NULL", "UPDATE records SET thread_state = NULL"],
    ["ALTER TABLE records ALTER file_path DROP NOT NULL",
     "UPDATE records SET file_path = NULL WHERE kind = 'review-thread'"],
    ["ALTER TABLE texts ALTER channel DROP NOT NULL", "UPDATE texts SET channel = NULL"],
    ["ALTER TABLE build_stamp ALTER row_count TYPE HUGEINT",
     "UPDATE build_stamp SET row_count = 170141183460469231731687303715884105727"],
    ["ALTER TABLE build_stamp ALTER stamp TYPE BLOB"],
])
def test_a_review_value_of_a_type_or_null_the_build_never_writes_is_unavailable(
    tmp_path: Path, statements: list[str]
) -> None:
    root = _built_review_store(tmp_path)
    live = store_path(root)
    copy = live.with_name("tampered.duckdb")
    shutil.copy(live, copy)
    with duckdb.connect(str(copy)) as connection:
        for statement in statements:
            try:
                connection.execute(statement)
            except duckdb.Error:  # this DuckDB cannot make that damage; the NOT NULL variants say so
                pytest.skip(f"DuckDB refuses {statement!r}")
    os.replace(copy, live)
    for where in (RecordFilter(), RecordFilter(q_folded="lock"), RecordFilter(q_folded="lock", pull_request=42)):
        with pytest.raises(ReviewStoreUnavailable):
            read_records(root, where, 50)
