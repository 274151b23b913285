"""In-process review.search behind the real dispatcher: every filter, bound and refusal, the order, the excerpt
cut, the response budget; inputs pass the published input schema first, answers validate against the response
schema."""

from __future__ import annotations

import asyncio
import inspect
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import schemas
from projection.review_build import build_review_store
from projection.review_store import REVIEW_STORE_ESCAPE_REFUSAL, STORE_RELATIVE
from serve.dispatch import Dispatcher
from serve.review_filters import MAX_PULL_REQUEST
from serve.tooling import ServeSettings
from serve.tools.review import (
    MAX_FILTER_CHARS,
    MAX_REVIEW_SEARCH_LIMIT,
    MAX_REVIEW_SEARCH_RESPONSE_CHARS,
    REVIEW_SEARCH_UNAVAILABLE_REFUSAL,
    TOOL_NAME,
    counted_chars,
    review_search,
    review_tools,
    within_budget,
)
from serve.validation import Admitted, InputValidator
from tests.projection.review_records import pull_request, review, thread, write_lake
from tests.support.tool_results import refusal_text, served
from theurian import registry
from theurian.project import init_project
from theurian.safety import SAFETY_TRIPLE

SETTINGS = ServeSettings("internal")
RESPONSE = jsonschema.Draft202012Validator(schemas.load("mcp", "review-search-response.schema.json"))
INPUT = InputValidator()
LONG = "x" * 300 + "TAIL"


def built_project(root: Path, project_id: str, records: list[dict[str, Any]]) -> Path:
    """A registered project under `project_id` whose lake holds `records`, with its store built."""
    root.mkdir()
    init_project(root)
    registry.register(root, project_id)
    write_lake(root, records)
    build_review_store(root)
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return built_project(tmp_path / "p", "p", [
        pull_request("Acme/Order-Service", 42, "PR_b", title="Fix the writer lock", body="50% of 100_000 *calls*"),
        review("Acme/Order-Service", 42, "PRR_b", body="Looks \"good\"", author_id="U_bob"),
        thread("Acme/Order-Service", 42, "PRRT_b2", bodies=("first", "Ärger with LOCKS"), state="resolved",
               path="orders/writer.py", author_id="U_bob"),
        thread("Acme/Order-Service", 42, "PRRT_b1", bodies=(LONG,), state="open", path="docs/read me.md"),
        thread("Acme/Order-Service", 7, "PRRT_a", bodies=("\x01\x02\x1f\x7f",), state="outdated"),
        pull_request("Acme/Api", 900, "PR_z", title="zeta"),
        review("Acme/Api", 900, "PRR_empty", body=""),
    ])


def call(**arguments: Any) -> dict[str, Any]:
    arguments = {"projectId": "p", **arguments}
    verdict = INPUT.admit(TOOL_NAME, "review-search-input.schema.json", arguments)
    assert isinstance(verdict, Admitted), verdict
    result = asyncio.run(Dispatcher(review_tools(), SETTINGS).call(TOOL_NAME, verdict.arguments))
    if not result["isError"]:
        RESPONSE.validate(result["structuredContent"])
    return result


def keys(**arguments: Any) -> list[str]:
    return [r["recordKey"] for r in served(call(**arguments))["records"]]


def refusal(**arguments: Any) -> str:
    return refusal_text(call(**arguments))


def test_the_handler_takes_exactly_the_input_schema_keys() -> None:
    parameters = inspect.signature(review_search).parameters
    declared = set(schemas.load("mcp", "review-search-input.schema.json")["properties"])
    assert {n for n, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY} == declared


def test_records_come_in_repository_then_pull_request_then_kind_then_path_order(project: Path) -> None:
    assert keys() == ["PR_z", "PRR_empty", "PRRT_a", "PR_b", "PRR_b", "PRRT_b1", "PRRT_b2"]


def test_pages_are_stable_and_truncated_is_read_one_record_past_limit(project: Path) -> None:
    whole = keys()
    first = call(limit=3)["structuredContent"]
    assert (first["count"], first["truncated"]) == (3, True)
    assert [r["recordKey"] for r in first["records"]] == whole[:3]
    assert call(limit=3)["structuredContent"] == first
    exact = call(limit=7)["structuredContent"]
    assert (exact["count"], exact["truncated"]) == (7, False)


def test_each_filter_is_exact_and_all_of_them_are_anded(project: Path) -> None:
    assert keys(repository="Acme/Api") == ["PR_z", "PRR_empty"]
    assert keys(repository="acme/api") == []
    assert keys(pullRequest=7) == ["PRRT_a"]
    assert keys(threadState="resolved") == ["PRRT_b2"]
    assert keys(author="U_bob") == ["PRR_b", "PRRT_b2"]
    assert keys(filePath="docs/read me.md") == ["PRRT_b1"]
    assert keys(filePath="docs/read") == []
    assert keys(author="U_bob", threadState="resolved", pullRequest=42, repository="Acme/Order-Service") == [
        "PRRT_b2"]
    assert keys(author="U_bob", threadState="open") == []


def test_q_is_a_literal_substring_folding_only_ascii_letters(project: Path) -> None:
    assert keys(q="WRITER lock") == ["PR_b"]
    assert keys(q="locks") == ["PRRT_b2"]
    assert keys(q="ärger") == []  # Ä is not one of the 26 letters, so it does not fold
    assert keys(q="Ärger") == ["PRRT_b2"]
    assert keys(q="50%") == ["PR_b"] and keys(q="%") == ["PR_b"] and keys(q="0_0") == ["PR_b"]
    assert keys(q="*calls*") == ["PR_b"] and keys(q="\"good\"") == ["PRR_b"]
    assert keys(q="a_b") == [] and keys(q="nothing like this") == []


def test_the_excerpt_comes_from_the_matching_channel_when_q_is_given(project: Path) -> None:
    [plain] = call(pullRequest=42, threadState="resolved")["structuredContent"]["records"]
    assert (plain["excerpt"], plain["excerptChannel"]) == ("first", "comment")
    [matched] = call(q="100_000")["structuredContent"]["records"]
    assert (matched["excerpt"], matched["excerptChannel"]) == ("50% of 100_000 *calls*", "body")
    [title] = call(q="fix")["structuredContent"]["records"]
    assert (title["excerpt"], title["excerptChannel"]) == ("Fix the writer lock", "title")


def test_a_long_excerpt_is_cut_at_280_and_marked_and_a_textless_record_has_none(project: Path) -> None:
    [long] = call(filePath="docs/read me.md")["structuredContent"]["records"]
    assert long["excerpt"] == LONG[:280] + "..."
    [_, textless] = call(repository="Acme/Api")["structuredContent"]["records"]
    assert (textless["excerpt"], textless["excerptChannel"]) == ("", None)


def test_an_empty_q_takes_the_excerpt_from_the_first_channel_holding_text_and_none_from_a_textless_record(
        tmp_path: Path) -> None:
    """An empty `q` is a substring of every channel, the empty ones too: the channel it "matched" first must still
    hold text, or a record with text would be served an empty excerpt and a textless one a channel."""
    built_project(tmp_path / "e", "e", [
        pull_request("Acme/E", 1, "PR_empty", title="", body=""),
        pull_request("Acme/E", 2, "PR_bodyonly", title="", body="has text"),
        review("Acme/E", 3, "PRR_empty", body=""),
        thread("Acme/E", 4, "PRRT_second", bodies=("", "the second comment")),
    ])
    for arguments in ({"q": ""}, {}):
        records = call(projectId="e", **arguments)["structuredContent"]["records"]
        served = {r["recordKey"]: (r["excerptChannel"], r["excerpt"]) for r in records}
        assert served == {
            "PR_empty": (None, ""), "PR_bodyonly": ("body", "has text"), "PRR_empty": (None, ""),
            "PRRT_second": ("comment", "the second comment"),
        }, arguments


def test_a_record_whose_text_is_all_control_characters_is_served_exactly(project: Path) -> None:
    [record] = call(pullRequest=7)["structuredContent"]["records"]
    assert record["excerpt"] == "\x01\x02\x1f\x7f"


def test_every_row_carries_the_safety_triple(project: Path) -> None:
    records = call(limit=50)["structuredContent"]["records"]
    assert records and all({k: r[k] for k in SAFETY_TRIPLE} == SAFETY_TRIPLE for r in records)


@pytest.mark.parametrize("limit", [0, -1, MAX_REVIEW_SEARCH_LIMIT + 1, 10**30])
def test_a_limit_outside_1_to_50_is_refused_naming_the_bound_without_the_number(project: Path, limit: int) -> None:
    text = refusal(limit=limit)
    assert f"`limit` must be between 1 and {MAX_REVIEW_SEARCH_LIMIT};" in text
    # the same words whatever was sent: the caller's number is never rendered
    assert text == refusal(limit=MAX_REVIEW_SEARCH_LIMIT + 1)


@pytest.mark.parametrize("number", [0, -5, MAX_PULL_REQUEST + 1, 10**40])
def test_a_pull_request_outside_its_column_range_is_refused_naming_the_range(project: Path, number: int) -> None:
    text = refusal(pullRequest=number)
    assert f"between 1 and {MAX_PULL_REQUEST}" in text
    assert text == refusal(pullRequest=0)  # the same words whatever was sent


def test_the_largest_storable_pull_request_is_a_filter_not_a_refusal(project: Path) -> None:
    assert keys(pullRequest=MAX_PULL_REQUEST) == []


@pytest.mark.parametrize("key", ["repository", "threadState", "author", "filePath", "q"])
def test_a_string_filter_past_400_characters_is_refused_by_its_length_never_echoed(project: Path, key: str) -> None:
    text = refusal(**{key: "Z" * (MAX_FILTER_CHARS + 1)})
    assert f"`{key}` is bounded at {MAX_FILTER_CHARS} characters" in text
    assert f"a value of {MAX_FILTER_CHARS + 1} characters" in text and "ZZZ" not in text
    if key != "threadState":
        call(**{key: "Z" * MAX_FILTER_CHARS})  # at the bound: a filter, answered


def test_an_unknown_thread_state_inside_the_bound_is_quoted_back_with_the_vocabulary(project: Path) -> None:
    text = refusal(threadState="Resolved")
    assert "'Resolved'" in text and "open, resolved, outdated, dismissed" in text


@pytest.mark.parametrize("value", ["log\x00zzz", "\x00", "a\ud800b"])
@pytest.mark.parametrize("key", ["repository", "q", "filePath"])
def test_a_nul_or_a_lone_surrogate_in_a_string_filter_is_refused(project: Path, key: str, value: str) -> None:
    text = refusal(**{key: value})
    assert f"`{key}` contains a " in text and value not in text


def test_an_unbuilt_store_is_refused_with_the_constant_not_answered_empty(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    init_project(root)
    registry.register(root, "p")
    assert refusal() == REVIEW_SEARCH_UNAVAILABLE_REFUSAL
    assert "`theurian review build`" in REVIEW_SEARCH_UNAVAILABLE_REFUSAL


def test_a_damaged_store_is_refused_with_the_same_constant(project: Path) -> None:
    (project / STORE_RELATIVE).write_bytes(b"\x00" * 4096)
    assert refusal() == REVIEW_SEARCH_UNAVAILABLE_REFUSAL


def test_a_store_linked_outside_the_state_folder_gets_its_own_refusal_and_cure(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.duckdb"
    os.replace(project / STORE_RELATIVE, outside)
    (project / STORE_RELATIVE).symlink_to(outside)
    text = refusal()
    assert text == REVIEW_STORE_ESCAPE_REFUSAL
    assert "review-store.duckdb" in text and ".theurian/state/" in text and "rm " in text
    assert str(tmp_path) not in text


def _record(chars: int) -> dict[str, Any]:
    return {"filePath": "f" * chars, "pullRequest": 12, "mayContainInstructions": True, "threadState": None}


def test_the_budget_counts_value_characters_and_stops_at_a_record_boundary() -> None:
    assert counted_chars(_record(10)) == 10 + 2 + 4
    records = [_record(100), _record(100), _record(100)]
    assert within_budget(records, 2 * 106) == records[:2]
    assert within_budget(records, 2 * 106 - 1) == records[:1]


def test_the_first_record_is_served_whole_and_alone_even_past_the_budget() -> None:
    over = _record(1000)
    assert within_budget([over, _record(1)], 500) == [over]
    assert within_budget([_record(1), over, _record(1)], 500) == [_record(1)]


def test_a_page_of_huge_records_stops_at_the_budget_and_says_truncated(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    init_project(root)
    registry.register(root, "p")
    huge = MAX_REVIEW_SEARCH_RESPONSE_CHARS // 3
    write_lake(root, [thread("o/r", n, f"PRRT_{n}", path=f"{n}" + "p" * huge) for n in range(1, 6)])
    build_review_store(root)
    page = call(limit=5)["structuredContent"]
    assert (page["count"], page["truncated"]) == (2, True)
    assert sum(counted_chars(r) for r in page["records"]) <= MAX_REVIEW_SEARCH_RESPONSE_CHARS
    assert all(r["filePath"].endswith("p" * huge) for r in page["records"])  # served whole, never cut


@pytest.fixture
def lookalikes(tmp_path: Path) -> Path:
    root = tmp_path / "look"
    root.mkdir()
    init_project(root)
    registry.register(root, "p")
    write_lake(root, [
        pull_request("o/r", 1, "PR_kelvin", title="\u212aelvin"),  # KELVIN SIGN
        pull_request("o/r", 2, "PR_k", title="kelvin"),
        pull_request("o/r", 3, "PR_sharp", title="Stra\u00dfe"),
        pull_request("o/r", 4, "PR_ss", title="strasse"),
        pull_request("o/r", 5, "PR_dotted", title="\u0130stanbul"),  # LATIN CAPITAL I WITH DOT ABOVE
        pull_request("o/r", 6, "PR_i", title="istanbul"),
        pull_request("o/r", 7, "PR_astral", body="\U0001f600" * 300),
        pull_request("o/r", 8, "PR_combining", body="e\u0301" * 150),
    ])
    build_review_store(root)
    return root


def test_only_the_26_ascii_letters_fold_at_the_tool(lookalikes: Path) -> None:
    assert keys(q="KELVIN") == ["PR_k"] and keys(q="\u212aelvin") == ["PR_kelvin"]
    assert keys(q="\u212a") == ["PR_kelvin"] and keys(q="k") == ["PR_k"]
    assert keys(q="STRASSE") == ["PR_ss"] and keys(q="stra\u00dfe") == ["PR_sharp"]
    assert keys(q="ss") == ["PR_ss"]
    assert keys(q="ISTANBUL") == ["PR_i"] and keys(q="\u0130stanbul") == ["PR_dotted"]
    assert keys(q="i\u0307stanbul") == []  # what Python's lower() makes of İ matches nothing


def test_the_excerpt_cut_counts_code_points(lookalikes: Path) -> None:
    [astral] = call(pullRequest=7, q="\U0001f600")["structuredContent"]["records"]
    assert astral["excerpt"] == "\U0001f600" * 280 + "..."
    [combining] = call(pullRequest=8, q="e\u0301")["structuredContent"]["records"]
    assert combining["excerpt"] == ("e\u0301" * 150)[:280] + "..."
    assert combining["excerpt"].endswith("e\u0301" + "...") and len(combining["excerpt"]) == 283


def test_one_past_max_pull_request_is_refused_naming_the_range(project: Path) -> None:
    assert MAX_PULL_REQUEST + 1 == 9223372036854775808
    text = refusal(pullRequest=9223372036854775808)
    assert "`pullRequest` must be between 1 and 9223372036854775807" in text
