"""In-process review.listConcerns behind the real dispatcher: the concerns of the labelled set, their order, every
filter, each bound at the bound and one past it, the refusals; inputs pass the published input schema first, answers
validate against the response schema."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import schemas
from projection.review_concerns import MIN_PULL_REQUESTS
from projection.review_concerns_query import MAX_LISTED_MEMBERS
from projection.review_query import CUT_MARK, MAX_EXCERPT_CHARS
from serve.dispatch import Dispatcher
from serve.review_filters import MAX_PULL_REQUEST
from serve.tooling import ServeSettings
from serve.tools import registered_tools
from serve.tools.review import MAX_FILTER_CHARS
from serve.tools.review_concerns import (
    DEFAULT_LIST_CONCERNS_LIMIT,
    LIST_CONCERNS_UNAVAILABLE_REFUSAL,
    MAX_LIST_CONCERNS_LIMIT,
    TOOL_NAME,
    review_list_concerns,
)
from serve.validation import InputValidator
from tests.projection.review_records import thread
from tests.serve.test_review_search import built_project
from tests.support.concern_set import labels, lake_records
from theurian import registry
from theurian.project import init_project
from theurian.safety import SAFETY_TRIPLE

INPUT_SCHEMA = "review-list-concerns-input.schema.json"
RESPONSE = jsonschema.Draft202012Validator(schemas.load("mcp", "review-list-concerns-response.schema.json"))
SIMILAR = jsonschema.Draft202012Validator(schemas.load("mcp", "review-find-similar-response.schema.json"))
INPUT = InputValidator()
# One remark, word for word, on every thread of the stores built here: all of them one concern.
REMARK = ("Please always take the two locks in the same order everywhere, otherwise these threads can deadlock "
          "waiting on each other. ")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return built_project(tmp_path / "p", "p", lake_records())


def call(name: str = TOOL_NAME, **arguments: Any) -> dict[str, Any]:
    arguments = {"projectId": "p", **arguments}
    schema = INPUT_SCHEMA if name == TOOL_NAME else "review-find-similar-input.schema.json"
    assert INPUT.problem(name, schema, arguments) is None
    result = asyncio.run(Dispatcher(registered_tools(), ServeSettings("internal")).call(name, arguments))
    if not result["isError"]:
        (RESPONSE if name == TOOL_NAME else SIMILAR).validate(result["structuredContent"])
    return result


def answer(**arguments: Any) -> dict[str, Any]:
    result = call(**arguments)
    assert result["isError"] is False, result
    content: dict[str, Any] = result["structuredContent"]
    return content


def refusal(**arguments: Any) -> str:
    result = call(**arguments)
    assert result["isError"] is True and "structuredContent" not in result
    text: str = result["content"][0]["text"]
    return text


def test_the_handler_takes_exactly_the_input_schema_keys() -> None:
    parameters = inspect.signature(review_list_concerns).parameters
    declared = set(schemas.load("mcp", INPUT_SCHEMA)["properties"])
    assert {n for n, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY} == declared


def test_concerns_come_most_widely_recurring_first_ties_by_id_each_with_the_safety_triple(project: Path) -> None:
    listed = answer(limit=MAX_LIST_CONCERNS_LIMIT)
    rows = listed["concerns"]
    assert rows and listed["count"] == len(rows) and listed["truncated"] is False
    spread = [(-r["pullRequests"], -r["reviewers"], -r["repositories"], -r["memberCount"], r["concernId"])
              for r in rows]
    assert spread == sorted(spread)
    for row in rows:
        assert {key: row[key] for key in SAFETY_TRIPLE} == SAFETY_TRIPLE and row["hiddenCharacters"] == []
        assert len(row["members"]) == min(row["memberCount"], MAX_LISTED_MEMBERS)
        assert row["representative"] in row["members"]
        assert all(member["recordKey"] in labels() for member in row["members"])
    assert answer()["count"] == min(DEFAULT_LIST_CONCERNS_LIMIT, len(rows))


def test_a_concern_excerpt_is_cut_as_review_search_cuts_and_q_matches_the_representative_text(
        project: Path) -> None:
    [first, *_] = answer()["concerns"]
    assert len(first["excerpt"]) <= MAX_EXCERPT_CHARS + len(CUT_MARK)
    words = first["excerpt"].removesuffix("...").split()
    piece = " ".join(words[1:4]).upper()
    matched = answer(q=piece)["concerns"]
    assert first["concernId"] in [row["concernId"] for row in matched]
    assert all(piece.lower() in row["excerpt"].lower() or row["excerpt"].endswith("...") for row in matched)
    assert answer(q="no representative text says this")["concerns"] == []


def _one_remark_project(root: Path, threads: int, body: str = REMARK) -> Path:
    """A registered, built project whose lake holds `threads` threads saying `body`, each on a pull request of its
    own: one concern of `threads` members."""
    return built_project(root, "p", [thread("acme/api", 1 + index, f"PRRT_same{index}", bodies=(body,),
                                            path=f"src/f{index}.py") for index in range(threads)])


def test_a_concern_past_the_member_bound_lists_its_first_members_and_counts_them_all(tmp_path: Path) -> None:
    # One member past the bound: exactly MAX_LISTED_MEMBERS listed (not one more), the first in the store's total
    # order (here by pull request), while memberCount is the concern's true size (the schema: "memberCount counts
    # them all").
    _one_remark_project(tmp_path / "p", MAX_LISTED_MEMBERS + 1)
    [row] = answer()["concerns"]
    assert row["memberCount"] == row["pullRequests"] == MAX_LISTED_MEMBERS + 1
    assert [m["recordKey"] for m in row["members"]] == [f"PRRT_same{index}" for index in range(MAX_LISTED_MEMBERS)]


@pytest.mark.parametrize(("length", "cut"), [(MAX_EXCERPT_CHARS + 1, True), (MAX_EXCERPT_CHARS, False)])
def test_a_concern_excerpt_past_the_bound_is_cut_and_marked_as_review_search_cuts_and_one_at_it_is_whole(
        tmp_path: Path, length: int, cut: bool) -> None:
    # review.search's cut (MAX_EXCERPT_CHARS characters, then CUT_MARK) over the representative text, the one
    # comment every member holds; it ends in a letter, so no trimming could pass for the cut.
    body = (REMARK * 3)[:length - 1] + "z"
    _one_remark_project(tmp_path / "p", MIN_PULL_REQUESTS, body)
    [row] = answer()["concerns"]
    assert row["excerpt"] == (body[:MAX_EXCERPT_CHARS] + CUT_MARK if cut else body)


def test_repository_and_min_pull_requests_filter_and_are_anded(project: Path) -> None:
    rows = answer(limit=MAX_LIST_CONCERNS_LIMIT)["concerns"]
    wide = max(row["pullRequests"] for row in rows)
    assert {r["concernId"] for r in answer(minPullRequests=wide, limit=20)["concerns"]} == {
        r["concernId"] for r in rows if r["pullRequests"] >= wide}
    in_web = answer(repository="acme/web", limit=20)["concerns"]
    assert in_web and all(any(m["repository"] == "acme/web" for m in r["members"]) for r in in_web)
    assert len(in_web) < len(rows)
    assert answer(repository="Acme/Web")["concerns"] == []  # exact and case-sensitive
    both = answer(repository="acme/web", minPullRequests=wide, limit=20)["concerns"]
    assert {r["concernId"] for r in both} == {r["concernId"] for r in in_web if r["pullRequests"] >= wide}


def test_limit_is_served_at_its_bound_and_refused_one_past_it_and_below_one(project: Path) -> None:
    assert answer(limit=MAX_LIST_CONCERNS_LIMIT)["count"] <= MAX_LIST_CONCERNS_LIMIT
    assert answer(limit=1)["count"] == 1 and answer(limit=1)["truncated"] is True
    for bad in (MAX_LIST_CONCERNS_LIMIT + 1, 0):
        assert refusal(limit=bad) == (
            f"{TOOL_NAME}: `limit` must be between 1 and {MAX_LIST_CONCERNS_LIMIT}; the "
            f"default is {DEFAULT_LIST_CONCERNS_LIMIT}. Nothing was clamped; send a limit in that range.")


def test_min_pull_requests_is_served_at_its_bounds_and_refused_past_them(project: Path) -> None:
    assert answer(minPullRequests=MAX_PULL_REQUEST)["concerns"] == []
    assert answer(minPullRequests=1)["count"] > 0
    for bad in (0, MAX_PULL_REQUEST + 1):
        assert refusal(minPullRequests=bad).startswith(f"{TOOL_NAME}: `minPullRequests` must be between 1 and ")


@pytest.mark.parametrize("key", ["repository", "q"])
def test_a_string_filter_is_served_at_its_bound_and_refused_one_past_it(project: Path, key: str) -> None:
    assert answer(**{key: "x" * MAX_FILTER_CHARS})["concerns"] == []
    assert refusal(**{key: "x" * (MAX_FILTER_CHARS + 1)}) == (
        f"{TOOL_NAME}: `{key}` is bounded at {MAX_FILTER_CHARS} characters; a value of "
        f"{MAX_FILTER_CHARS + 1} characters was sent. Shorten it or omit the filter.")
    assert "NUL" in refusal(**{key: "a\x00b"})


def test_a_project_with_no_store_is_refused_with_the_constant(tmp_path: Path) -> None:
    root = tmp_path / "bare"
    root.mkdir()
    init_project(root)
    registry.register(root, "p")
    assert refusal() == LIST_CONCERNS_UNAVAILABLE_REFUSAL


def test_find_similar_names_the_concern_of_each_record_and_null_for_the_rest(project: Path) -> None:
    members = {m["recordKey"]: row["concernId"] for row in answer(limit=20)["concerns"] for m in row["members"]}
    found = call("review.findSimilar", situation="two locks taken in opposite orders deadlock", limit=20)
    records = found["structuredContent"]["records"]
    assert records and all("concernId" in record for record in records)
    assert all(record["concernId"] == members.get(record["recordKey"]) for record in records)
    assert any(record["concernId"] is None for record in records)
    assert any(record["concernId"] is not None for record in records)
