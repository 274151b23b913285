"""In-process review.findSimilar behind the real dispatcher: ranking by meaning, the floor's empty answer, the
filters, every bound and refusal, the excerpt, determinism; inputs pass the published input schema first, answers
validate against the response schema."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import schemas
from projection.review_similar import SIMILARITY_FLOOR, content_words
from serve.dispatch import Dispatcher
from serve.gate import MAX_CONCURRENT_SEARCHES
from serve.tooling import ServeSettings
from serve.tools.review import MAX_FILTER_CHARS, counted_chars
from serve.tools.review_similar import (
    FIND_SIMILAR_CAPACITY_REFUSAL,
    FIND_SIMILAR_UNAVAILABLE_REFUSAL,
    MAX_FIND_SIMILAR_LIMIT,
    MAX_FIND_SIMILAR_RESPONSE_CHARS,
    MAX_SITUATION_CHARS,
    SITUATION_WITHOUT_WORDS_REFUSAL,
    TOOL_NAME,
    review_find_similar,
    review_similar_tools,
)
from serve.validation import Admitted, InputValidator
from tests.projection.review_records import pull_request, review, thread, write_lake
from tests.serve.test_review_search import built_project
from tests.support.admission import five_at_once
from tests.support.cli_app import invoke
from tests.support.sample_project import registered_empty_project
from tests.support.tool_results import refusal_text, served
from theurian.embedding import DEFAULT_MODEL_NAME
from theurian.safety import SAFETY_TRIPLE

SETTINGS = ServeSettings("internal")
INPUT_SCHEMA = "review-find-similar-input.schema.json"
RESPONSE = jsonschema.Draft202012Validator(schemas.load("mcp", "review-find-similar-response.schema.json"))
INPUT = InputValidator()
LONG = "The changelog entry should say which release this lands in and link the migration guide for users. " * 4


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return built_project(tmp_path / "p", "p", [
        pull_request("acme/pay", 1, "PR_1", title="Transfers", body="the lock order in transfers"),
        thread("acme/pay", 1, "PRRT_locks", path="ledger/transfer.py", state="resolved", bodies=(
            "Rename this variable please.",
            "Please always take the locks in the same order everywhere; otherwise two threads can deadlock.",
        )),
        thread("acme/pay", 2, "PRRT_logs", path="clients/http.py", state="open", bodies=(
            "This debug line prints the Authorization bearer value into our log aggregator for anyone to read.",)),
        thread("acme/web", 3, "PRRT_css", path="app/site.css", state="resolved", bodies=(
            "The footer links wrap awkwardly on tablets; use flex-wrap and a smaller gap.",)),
        review("acme/web", 3, "PRR_money", body="Summing prices as floats drifts; keep amounts in integer cents."),
        thread("acme/web", 4, "PRRT_long", path="x.py", bodies=(LONG,)),
    ])


def call(**arguments: Any) -> dict[str, Any]:
    arguments = {"projectId": "p", **arguments}
    verdict = INPUT.admit(TOOL_NAME, INPUT_SCHEMA, arguments)
    assert isinstance(verdict, Admitted), verdict
    result = asyncio.run(Dispatcher(review_similar_tools(), SETTINGS).call(TOOL_NAME, verdict.arguments))
    if not result["isError"]:
        RESPONSE.validate(result["structuredContent"])
    return result


def answer(**arguments: Any) -> dict[str, Any]:
    return served(call(**arguments))


def keys(**arguments: Any) -> list[str]:
    return [record["recordKey"] for record in answer(**arguments)["records"]]


def refusal(**arguments: Any) -> str:
    return refusal_text(call(**arguments))


def test_the_handler_takes_exactly_the_input_schema_keys() -> None:
    parameters = inspect.signature(review_find_similar).parameters
    declared = set(schemas.load("mcp", INPUT_SCHEMA)["properties"])
    assert {n for n, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY} == declared


def test_the_record_shape_is_review_search_s_plus_the_three_scores_and_the_concern() -> None:
    search = schemas.load("mcp", "review-search-response.schema.json")["$defs"]["record"]
    similar = schemas.load("mcp", "review-find-similar-response.schema.json")["$defs"]["record"]
    added = ["similarity", "fusedScore", "foundBy", "concernId"]
    assert set(similar["properties"]) == set(search["properties"]) | set(added)
    assert similar["required"] == search["required"] + added


def test_a_situation_sharing_no_word_with_a_thread_finds_it_first(project: Path) -> None:
    found = answer(situation="secret credentials leaked via logging output")
    first = found["records"][0]
    assert first["recordKey"] == "PRRT_logs"
    assert first["foundBy"] == ["dense"]
    assert 0 < first["similarity"] <= 1 and first["fusedScore"] == first["similarity"]
    assert {key: first[key] for key in SAFETY_TRIPLE} == SAFETY_TRIPLE
    assert found["retrieval"]["model"] == DEFAULT_MODEL_NAME
    assert found["retrieval"]["similarityFloor"] == SIMILARITY_FLOOR


def test_the_excerpt_is_the_comment_nearest_the_situation(project: Path) -> None:
    first = answer(situation="threads acquiring locks in different orders can deadlock")["records"][0]
    assert first["recordKey"] == "PRRT_locks"
    assert first["excerpt"].startswith("Please always take the locks")
    assert first["excerptChannel"] == "comment"


def test_a_long_excerpt_is_cut_as_review_search_cuts_it(project: Path) -> None:
    [record] = answer(situation="release notes must mention the upgrade instructions", filePath="x.py")["records"]
    assert record["excerpt"] == LONG[:280] + "..."


def test_a_review_submission_is_found_and_its_body_is_the_excerpt(project: Path) -> None:
    [record] = answer(situation="adding up prices as floating point numbers", kind="review-submission")["records"]
    assert (record["recordKey"], record["excerptChannel"]) == ("PRR_money", "review-body")


def test_nothing_like_this_is_an_empty_answer_not_the_least_bad_threads(project: Path) -> None:
    found = answer(situation="tuning the CUDA kernel launch parameters for the GPU training job")
    assert (found["count"], found["records"]) == (0, [])


def test_a_shared_content_word_adds_the_lexical_channel(project: Path) -> None:
    first = answer(situation="the bearer credential ends up in the log")["records"][0]
    assert first["recordKey"] == "PRRT_logs"
    assert first["foundBy"] == ["dense", "lexical"]
    assert first["fusedScore"] > first["similarity"]


def test_filters_are_exact_and_anded(project: Path) -> None:
    situation = "two workers each hold one lock while waiting on the other"
    notes = "release notes must mention the upgrade instructions"
    assert keys(situation=notes, repository="acme/web", filePath="x.py") == ["PRRT_long"]
    assert keys(situation=situation, repository="ACME/pay") == []
    assert "PRRT_locks" not in keys(situation=situation, threadState="open", limit=MAX_FIND_SIMILAR_LIMIT)
    assert keys(situation=situation, kind="review-submission", repository="acme/pay") == []


def test_compared_counts_the_units_the_filters_admit_so_an_empty_answer_says_which_empty_it_is(project: Path) -> None:
    situation = "two workers each hold one lock while waiting on the other"
    assert answer(situation=situation)["retrieval"]["compared"] == 5  # four threads and the submission with a body
    assert answer(situation=situation, repository="acme/web")["retrieval"]["compared"] == 3
    assert answer(situation=situation, repository="acme/web", kind="review-thread")["retrieval"]["compared"] == 2
    misspelt = answer(situation=situation, repository="ACME/pay")
    assert (misspelt["count"], misspelt["retrieval"]["compared"]) == (0, 0)
    far = answer(situation="tuning the CUDA kernel launch parameters for the GPU training job")
    assert (far["count"], far["retrieval"]["compared"]) == (0, 5)


@pytest.mark.parametrize(("key", "value", "lacks"), [("threadState", "open", "thread state"),
                                                    ("filePath", "ledger/transfer.py", "file path")])
def test_a_thread_only_filter_beside_kind_review_submission_is_refused_as_never_matching(
        tmp_path: Path, key: str, value: str, lacks: str) -> None:
    registered_empty_project(tmp_path / "bare", "p")  # refused from the arguments alone: no store is opened
    assert refusal(situation="lock order", kind="review-submission", **{key: value}) == (
        f"review.findSimilar: `{key}` selects review threads only, and `kind` 'review-submission' selects review "
        f"submissions, which have no {lacks}: together they can never match, and an empty answer would read as "
        "\"nothing like this came up\". Drop one of the two."
    )


def test_a_thread_only_filter_beside_kind_review_thread_is_answered(project: Path) -> None:
    situation = "threads acquiring locks in different orders can deadlock"
    assert keys(situation=situation, kind="review-thread", threadState="resolved",
                filePath="ledger/transfer.py") == ["PRRT_locks"]


def test_the_same_store_and_situation_give_the_same_answer_byte_for_byte(project: Path) -> None:
    first = call(situation="secrets leaking into logs", limit=MAX_FIND_SIMILAR_LIMIT)
    assert call(situation="secrets leaking into logs", limit=MAX_FIND_SIMILAR_LIMIT) == first


def test_limit_is_bounded_at_exactly_twenty_and_refused_past_it(project: Path) -> None:
    assert answer(situation="lock order", limit=MAX_FIND_SIMILAR_LIMIT)["count"] <= MAX_FIND_SIMILAR_LIMIT
    text = refusal(situation="lock order", limit=MAX_FIND_SIMILAR_LIMIT + 1)
    assert text.startswith("review.findSimilar: `limit` must be between 1 and 20; the default is 5.")
    assert "MAX_" not in text
    assert refusal(situation="lock order", limit=0).startswith("review.findSimilar: `limit` must be between 1")


def test_the_default_limit_is_five(tmp_path: Path) -> None:
    records = [thread("o/r", n, f"PRRT_{n}", bodies=(f"the lock order differs in path {n}",)) for n in range(1, 9)]
    built_project(tmp_path / "many", "p", records)
    assert answer(situation="lock order differs")["count"] == 5


def test_a_page_of_huge_records_stops_at_the_budget_and_says_truncated(tmp_path: Path) -> None:
    # Five near records, each over a third of the budget (its file path): two fit, a third would pass the budget.
    huge = MAX_FIND_SIMILAR_RESPONSE_CHARS // 3
    built_project(tmp_path / "huge", "p", [
        thread("o/r", n, f"PRRT_{n}", path=f"{n}" + "p" * huge, bodies=(f"the lock order differs in path {n}",))
        for n in range(1, 6)])
    page = answer(situation="lock order differs", limit=5)
    assert (page["count"], page["truncated"]) == (2, True)
    assert sum(counted_chars(r) for r in page["records"]) <= MAX_FIND_SIMILAR_RESPONSE_CHARS
    assert all(r["filePath"].endswith("p" * huge) for r in page["records"])  # served whole, never cut


def test_a_page_within_the_budget_is_not_truncated(project: Path) -> None:
    page = answer(situation="lock order", limit=MAX_FIND_SIMILAR_LIMIT)
    assert (page["count"], page["truncated"]) == (5, False)


def test_a_store_with_no_embedded_record_answers_empty(tmp_path: Path) -> None:
    built_project(tmp_path / "prs", "p", [pull_request("o/r", 1, "PR_1", title="the lock order", body="lock order")])
    found = answer(situation="the lock order")
    assert (found["records"], found["retrieval"]["compared"]) == ([], 0)


def test_the_cli_says_there_was_nothing_to_compare_when_the_store_holds_no_embedded_record(tmp_path: Path) -> None:
    root = built_project(tmp_path / "prs", "p", [pull_request("o/r", 1, "PR_1", title="the lock order")])
    printed = invoke(["review", "similar", "the lock order", "--project", str(root)])
    assert (printed.exit_code, printed.stdout) == (
        0, "nothing to compare: the review store holds no review thread or review submission with text\n")


def test_a_situation_of_exactly_2000_characters_is_served_and_one_more_is_refused_at_the_wire(project: Path) -> None:
    assert answer(situation="x" * MAX_SITUATION_CHARS)["retrieval"]["compared"] == 5  # compared with every unit
    arguments = {"projectId": "p", "situation": "x" * (MAX_SITUATION_CHARS + 1)}
    problem = INPUT.problem(TOOL_NAME, INPUT_SCHEMA, arguments)
    assert problem is not None and f"maxLength {MAX_SITUATION_CHARS}" in problem
    assert INPUT.problem(TOOL_NAME, INPUT_SCHEMA, {"projectId": "p", "situation": ""}) is not None
    assert INPUT.problem(TOOL_NAME, INPUT_SCHEMA, {"projectId": "p"}) is not None


def test_filter_bounds_and_vocabularies_are_refused_naming_them(project: Path) -> None:
    assert answer(situation="lock", repository="r" * MAX_FILTER_CHARS)["count"] == 0
    text = refusal(situation="lock", repository="r" * (MAX_FILTER_CHARS + 1))
    assert text.startswith(
        f"review.findSimilar: `repository` is bounded at {MAX_FILTER_CHARS} characters")
    assert f"a value of {MAX_FILTER_CHARS + 1} characters" in text
    assert refusal(situation="lock", threadState="closed").startswith(
        "review.findSimilar: `threadState` 'closed' is not one of open, resolved, outdated, dismissed")
    assert refusal(situation="lock", kind="pull-request").startswith(
        "review.findSimilar: `kind` 'pull-request' is not one of review-thread, review-submission")
    assert "NUL" in refusal(situation="lock\x00order")
    assert "NUL" in refusal(situation="lock", filePath="a\x00b")


def test_a_word_is_a_run_of_letters_or_digits_in_any_script_and_not_a_stop_word() -> None:
    wordless = ("...", "?!", " \t\n", "[] {}", "— «» …", "🙂", "_", "the is of")
    worded = ("x", "42", "ロック順序", "Überlauf", "... the deadlock?!", "CVE-2024")
    assert [content_words(s) for s in wordless] == [frozenset()] * len(wordless)
    assert all(content_words(s) for s in worded)


def test_a_situation_with_no_word_is_refused_before_the_store_is_opened(tmp_path: Path) -> None:
    registered_empty_project(tmp_path / "bare", "p")  # no store: the situation is what is refused
    assert refusal(situation="...") == SITUATION_WITHOUT_WORDS_REFUSAL


def test_a_situation_in_another_script_is_compared_not_refused(tmp_path: Path) -> None:
    built_project(tmp_path / "ja", "p", [
        thread("o/r", 1, "PRRT_css_ja", bodies=("このCSSはタブレットで崩れます。",)),
        thread("o/r", 2, "PRRT_locks_en", bodies=("Always take the locks in the same order, or threads deadlock.",)),
        thread("o/r", 3, "PRRT_locks_ja", bodies=("ロックを取る順序がスレッドごとに違うと、デッドロックが起きます。",)),
    ])
    found = answer(situation="ロックの順序が違うとデッドロックする")  # shares no whole word with the thread
    assert found["retrieval"]["compared"] == 3
    assert found["records"][0]["recordKey"] == "PRRT_locks_ja"
    assert found["records"][0]["foundBy"] == ["dense"]


def test_a_situation_whose_every_word_the_model_lacks_is_refused_not_answered_empty(tmp_path: Path) -> None:
    from tests.support.fake_model import write_fake_model
    from theurian.installation import installation_config_path

    config = installation_config_path()
    config.parent.mkdir(parents=True)
    config.write_text(f'embedding_model = "{write_fake_model(tmp_path / "fake")}"\n', encoding="utf-8")
    built_project(tmp_path / "p", "p", [thread("o/r", 1, "PRRT_a", bodies=("a lock order",))])
    assert answer(situation="lock order")["count"] == 1
    assert refusal(situation="zebra crossing") == SITUATION_WITHOUT_WORDS_REFUSAL  # both [UNK]: a zero vector


def test_a_project_without_a_store_is_refused_with_the_constant(tmp_path: Path) -> None:
    registered_empty_project(tmp_path / "bare", "p")
    assert refusal(situation="lock order") == FIND_SIMILAR_UNAVAILABLE_REFUSAL


def test_a_fifth_concurrent_call_is_refused_with_its_own_constant(project: Path) -> None:
    [tool] = review_similar_tools()
    run = five_at_once(tool, {"projectId": "p", "situation": "lock order"}, SETTINGS)
    assert run.refused == {"content": [{"type": "text", "text": FIND_SIMILAR_CAPACITY_REFUSAL}], "isError": True}
    assert [h["isError"] for h in run.held] == [False] * MAX_CONCURRENT_SEARCHES


def test_a_rebuilt_store_is_served_without_restarting(project: Path) -> None:
    before = answer(situation="money kept in binary floating point")["retrieval"]["storeBuildId"]
    write_lake(project, [thread("acme/web", 5, "PRRT_new", bodies=("Use Decimal for currency amounts.",))])
    from projection.review_build import build_review_store

    build_review_store(project)
    after = answer(situation="money kept in binary floating point", limit=20)
    assert after["retrieval"]["storeBuildId"] != before
    assert "PRRT_new" in [r["recordKey"] for r in after["records"]]


def test_a_store_built_with_another_model_than_the_configured_one_is_refused(tmp_path: Path) -> None:
    from tests.support.fake_model import write_fake_model
    from theurian.installation import installation_config_path

    config = installation_config_path()
    config.parent.mkdir(parents=True)
    config.write_text(f'embedding_model = "{write_fake_model(tmp_path / "fake")}"\n', encoding="utf-8")
    built_project(tmp_path / "p", "p", [thread("o/r", 1, "PRRT_a", bodies=("a lock order",))])
    assert answer(situation="lock order")["retrieval"]["model"] == "fake-3d"
    # Back on the bundled model, in the same process that verified the store (a fresh one refuses it at open:
    # tests/projection/test_review_vectors.py): its vectors are another model's, and comparing them would crash.
    config.unlink()
    assert refusal(situation="lock order") == FIND_SIMILAR_UNAVAILABLE_REFUSAL
