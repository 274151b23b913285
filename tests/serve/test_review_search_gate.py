"""review.search's own admission gate under real concurrency: four calls hold permits, a fifth is refused."""

from pathlib import Path

from projection.review_build import build_review_store
from serve.gate import MAX_CONCURRENT_SEARCHES
from serve.tooling import ServeSettings
from serve.tools.review import REVIEW_SEARCH_CAPACITY_REFUSAL, review_tools
from tests.projection.review_records import copy_fixture_lake
from tests.support.admission import five_at_once
from tests.support.sample_project import registered_empty_project

SETTINGS = ServeSettings("internal")


def test_a_fifth_concurrent_search_is_refused_with_its_own_constant_and_served_once_permits_free(
    tmp_path: Path,
) -> None:
    root = registered_empty_project(tmp_path / "p", "p")
    copy_fixture_lake(root)
    build_review_store(root)
    [tool] = review_tools()
    run = five_at_once(tool, {"projectId": "p", "q": "lock"}, SETTINGS)  # the real search, once let through
    assert run.refused == {"content": [{"type": "text", "text": REVIEW_SEARCH_CAPACITY_REFUSAL}], "isError": True}
    assert [h["isError"] for h in run.held] == [False] * MAX_CONCURRENT_SEARCHES
    assert all(h["structuredContent"]["count"] >= 1 for h in run.held)
    assert run.after["isError"] is False
