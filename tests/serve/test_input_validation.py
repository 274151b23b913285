"""The SEC-12 tier in isolation: what it refuses, what it names, and that it never echoes a value."""

from typing import Any

import pytest

from serve.tools.knowledge import MAX_QUERY_CHARS
from serve.validation import (
    INLINE_CHECK_CHARS,
    INLINE_CHECK_VALUES,
    MAX_ARGUMENT_VALUES,
    TOOLS_ANSWERING_SURROGATES,
    WHOLE,
    Admitted,
    InputValidator,
    Refused,
    checks_at_once,
)
from tests.support.schema_values import schema_bound
from theurian.schema_faults import MAX_KEY_CHARS_SHOWN, MAX_KEYS_NAMED, describe

SECRET = "VALUE-THAT-MUST-NEVER-BE-ECHOED"


@pytest.fixture(scope="module")
def validator() -> InputValidator:
    return InputValidator()


def test_a_valid_call_passes(validator: InputValidator) -> None:
    assert validator.problem("review.search", "review-search-input.schema.json",
                             {"projectId": "p", "q": "x", "limit": 3, "snapshotId": "s", "agentId": "a"}) is None


def test_an_unknown_key_is_refused_naming_the_key_and_not_its_value(validator: InputValidator) -> None:
    problem = validator.problem("review.search", "review-search-input.schema.json",
                                {"projectId": "p", "sortBy": SECRET})
    assert problem == "Invalid arguments for review.search: unknown key `sortBy` is not accepted by this tool."


@pytest.mark.parametrize(("key", "shown"), [
    ("a\nb", "`a\\nb`"), ("a\x00b", "`a\\x00b`"), ("a\x1b[31mb", "`a\\x1b[31mb`"), ("a\u202eb", "`a\\u202eb`"),
    ("a\\nb", "`a\\\\nb`"), ("caf\u00e9", "`caf\u00e9`"),
])
def test_an_unknown_key_is_quoted_with_its_unprintable_characters_escaped(
    validator: InputValidator, key: str, shown: str
) -> None:
    problem = validator.problem("project.list", "project-list-input.schema.json", {key: 1})
    assert problem == f"Invalid arguments for project.list: unknown key {shown} is not accepted by this tool."
    assert problem.isprintable()


def test_an_overlong_unknown_key_is_described_by_length(validator: InputValidator) -> None:
    problem = validator.problem("project.list", "project-list-input.schema.json", {"k" * 500: 1})
    assert problem is not None and "a key of 500 characters" in problem and "k" * 81 not in problem


def test_an_unknown_key_is_named_at_the_key_bound_and_described_by_length_one_past_it(
        validator: InputValidator) -> None:
    at, past = "k" * MAX_KEY_CHARS_SHOWN, "k" * (MAX_KEY_CHARS_SHOWN + 1)
    assert validator.problem("project.list", "project-list-input.schema.json", {at: 1}) == (
        f"Invalid arguments for project.list: unknown key `{at}` is not accepted by this tool.")
    assert validator.problem("project.list", "project-list-input.schema.json", {past: 1}) == (
        f"Invalid arguments for project.list: unknown key (a key of {MAX_KEY_CHARS_SHOWN + 1} characters) is not "
        "accepted by this tool.")


def test_several_unknown_keys_are_named_sorted_up_to_the_bound_and_the_rest_counted(
        validator: InputValidator) -> None:
    names = [f"k{index}" for index in range(MAX_KEYS_NAMED + 1)]
    exactly = validator.problem("project.list", "project-list-input.schema.json", dict.fromkeys(names[:2], 1))
    assert exactly == "Invalid arguments for project.list: unknown keys `k0`, `k1` are not accepted by this tool."
    more = validator.problem("project.list", "project-list-input.schema.json", dict.fromkeys(reversed(names), 1))
    assert more == ("Invalid arguments for project.list: unknown keys `k0`, `k1`, `k2`, `k3`, `k4` and 1 more are not "
                    "accepted by this tool.")


@pytest.mark.parametrize("tool, schema", [("project.list", "project-list-input.schema.json"),
                                          ("system.capabilities", "system-capabilities-input.schema.json")])
def test_tools_without_arguments_refuse_any_argument(validator: InputValidator, tool: str, schema: str) -> None:
    assert validator.problem(tool, schema, {}) is None
    problem = validator.problem(tool, schema, {"projectId": SECRET})
    assert problem is not None and "`projectId`" in problem and SECRET not in problem


def test_a_wrong_type_names_the_key_and_the_expected_type(validator: InputValidator) -> None:
    problem = validator.problem("review.search", "review-search-input.schema.json",
                                {"projectId": "p", "limit": SECRET})
    assert problem == ("Invalid arguments for review.search: `limit` must be of type integer; a string of "
                       f"{len(SECRET)} characters was sent.")


def test_a_boolean_is_not_an_integer(validator: InputValidator) -> None:
    problem = validator.problem("review.search", "review-search-input.schema.json", {"projectId": "p", "limit": True})
    assert problem is not None and "`limit` must be of type integer" in problem


def test_a_missing_project_id_is_refused_never_defaulted(validator: InputValidator) -> None:
    problem = validator.problem("review.search", "review-search-input.schema.json", {"q": SECRET})
    assert problem == "Invalid arguments for review.search: the required key `projectId` is missing from the arguments."


def test_a_query_past_max_query_chars_is_refused_at_the_wire_without_echo(validator: InputValidator) -> None:
    schema = "knowledge-search-input.schema.json"
    query = "q" * MAX_QUERY_CHARS
    assert validator.problem("knowledge.search", schema, {"projectId": "p", "query": query}) is None
    problem = validator.problem("knowledge.search", schema, {"projectId": "p", "query": query + "q"})
    assert problem == (f"Invalid arguments for knowledge.search: `query` violates maxLength {MAX_QUERY_CHARS}; a "
                       f"string of {MAX_QUERY_CHARS + 1} characters was sent.")
    assert schema_bound(schema, "query", "maxLength") == MAX_QUERY_CHARS


def test_a_closed_category_is_refused_at_the_wire_with_its_key_path(validator: InputValidator) -> None:
    args = {"projectId": "p", "repository": "o/n", "recordKey": "k", "fixCommit": "a" * 40, "itemId": "i",
            "title": "t", "body": "b", "kind": "convention", "category": SECRET, "owner": "o", "author": "a"}
    problem = validator.problem("review.generateKnowledgeCandidate",
                                "review-generate-knowledge-candidate-input.schema.json", args)
    assert problem is not None and problem.startswith(
        "Invalid arguments for review.generateKnowledgeCandidate: `category` must be one of: specification-gap,")
    assert problem.endswith(f"; a string of {len(SECRET)} characters was sent.")
    assert SECRET not in problem


def test_a_nested_violation_names_the_nested_path(validator: InputValidator) -> None:
    args = {"projectId": "p", "repository": "o/n", "recordKey": "k", "fixCommit": "a" * 40, "itemId": "i",
            "title": "t", "body": "b", "kind": "convention", "category": "testing-rule", "owner": "o",
            "author": "a", "evidenceTrail": ["fine", 7]}
    problem = validator.problem("review.generateKnowledgeCandidate",
                                "review-generate-knowledge-candidate-input.schema.json", args)
    assert problem == ("Invalid arguments for review.generateKnowledgeCandidate: "
                       "`evidenceTrail[1]` must be of type string; an integer was sent.")


def test_arguments_that_are_not_an_object_are_refused(validator: InputValidator) -> None:
    problem = validator.problem("review.search", "review-search-input.schema.json", [SECRET])
    assert problem == "Invalid arguments for review.search: the arguments must be a JSON object."


DRAFT = ("knowledge.generateMigrationDraft", "knowledge-generate-migration-draft-input.schema.json")


def test_a_top_level_array_past_its_bound_is_refused_as_the_full_check_words_it_without_walking_it(
        validator: InputValidator) -> None:
    """1.4 million elements took jsonschema 5 s on the event loop, /health waiting behind it."""
    bound = schema_bound(DRAFT[1], "operations", "maxItems")
    arguments = {"projectId": "p", "author": "a", "description": "d", "operations": [{}] * 1_400_000}
    worded = (f"Invalid arguments for knowledge.generateMigrationDraft: `operations` violates maxItems {bound}; an "
              "array of {} items was sent.")
    assert validator.problem(*DRAFT, arguments) == worded.format(1_400_000)
    small = {"projectId": "p", "author": "a", "description": "d", "operations": [{"op": "x"}] * (bound + 1)}
    assert validator.problem(*DRAFT, small) == worded.format(bound + 1)
    # The same words the full check gives: a nested array past its bound is not seen by the first look.
    nested = validator.validator(DRAFT[1])
    error = next(e for e in nested.iter_errors(small) if e.validator == "maxItems")
    assert f"Invalid arguments for {DRAFT[0]}: {describe(error, WHOLE, sent=True)}." == worded.format(bound + 1)


def test_more_values_than_any_call_holds_are_refused_naming_the_bound(validator: InputValidator) -> None:
    operation = {"op": "addAlias", "alias": "x", "itemId": "y", "labels": ["z"] * MAX_ARGUMENT_VALUES}
    text = validator.problem(*DRAFT, {"projectId": "p", "author": "a", "description": "d", "operations": [operation]})
    assert text == (f"Invalid arguments for knowledge.generateMigrationDraft: the arguments hold more than "
                    f"{MAX_ARGUMENT_VALUES} values; no call to this tool needs that many.")
    operation["labels"] = ["z"] * (MAX_ARGUMENT_VALUES - 20)  # under the bound: left to the schema and the tool
    assert validator.problem(*DRAFT, {"projectId": "p", "author": "a", "description": "d",
                                      "operations": [operation]}) is None


def _values(value: Any) -> int:
    """How many values `value` is, counted as the bound counts them: itself and every value inside it."""
    if isinstance(value, dict):
        return 1 + sum(_values(item) for item in value.values())
    if isinstance(value, list):
        return 1 + sum(_values(item) for item in value)
    return 1


def test_exactly_the_bound_of_values_is_admitted_and_one_more_is_refused(validator: InputValidator) -> None:
    operation: dict[str, Any] = {"op": "addAlias", "alias": "x", "itemId": "y", "labels": []}
    arguments = {"projectId": "p", "author": "a", "description": "d", "operations": [operation]}
    operation["labels"] = ["z"] * (MAX_ARGUMENT_VALUES - _values(arguments))
    assert _values(arguments) == MAX_ARGUMENT_VALUES
    assert validator.problem(*DRAFT, arguments) is None  # left to the schema and the tool, which take it
    operation["labels"].append("z")
    assert validator.problem(*DRAFT, arguments) == (
        f"Invalid arguments for knowledge.generateMigrationDraft: the arguments hold more than {MAX_ARGUMENT_VALUES} "
        "values; no call to this tool needs that many.")


def test_a_lone_surrogate_is_refused_here_except_where_the_contract_gives_the_tool_its_own_answer(
        validator: InputValidator) -> None:
    """It reached knowledge.get and knowledge.proposeChange in the 2026 era, and each failed as an internal fault
    with the value in the log; review.search and review.findings refuse it in their own words, knowledge.search
    folds it."""
    refused = validator.problem("knowledge.get", "knowledge-get-input.schema.json",
                                {"projectId": "p", "itemId": "SECRET\ud800"})
    assert refused == "Invalid arguments for knowledge.get: `itemId` is not Unicode text (it holds a lone surrogate)."
    for tool, schema, key in [("knowledge.search", "knowledge-search-input.schema.json", "query"),
                              ("review.search", "review-search-input.schema.json", "q"),
                              ("review.findings", "review-findings-input.schema.json", "q")]:
        assert tool in TOOLS_ANSWERING_SURROGATES
        assert validator.problem(tool, schema, {"projectId": "p", key: "a\ud800b"}) is None


@pytest.mark.parametrize("key", ["projectId", "snapshotId", "agentId", "taskId"])
@pytest.mark.parametrize(("tool", "schema"), [
    ("review.search", "review-search-input.schema.json"), ("review.findings", "review-findings-input.schema.json"),
    ("knowledge.search", "knowledge-search-input.schema.json"), ("knowledge.get", "knowledge-get-input.schema.json"),
    ("review.findSimilar", "review-find-similar-input.schema.json")])
def test_a_lone_surrogate_in_the_shared_context_is_refused_here_for_every_tool(
        validator: InputValidator, tool: str, schema: str, key: str) -> None:
    """The tools that answer a lone surrogate themselves answer it in their filters only: a `projectId` holding one
    reached the registry, whose refusal echoed it back (not Unicode text, in the response)."""
    arguments = {"projectId": "my-service", "query": "q", "itemId": "i", "situation": "s"}
    allowed = {"review.search": {"projectId"}, "review.findings": {"projectId"}, "knowledge.search": {"query"},
               "knowledge.get": {"itemId"}, "review.findSimilar": {"situation"}}[tool] | {"projectId"}
    sent = {k: v for k, v in arguments.items() if k in allowed} | {key: "my-service\ud800"}
    assert validator.problem(tool, schema, sent) == (
        f"Invalid arguments for {tool}: `{key}` is not Unicode text (it holds a lone surrogate).")


def test_a_call_is_checked_on_the_event_loop_only_up_to_its_small_bounds() -> None:
    # The arguments object counts as one value: 63 values under it make exactly INLINE_CHECK_VALUES.
    assert checks_at_once({f"k{i}": 1 for i in range(INLINE_CHECK_VALUES - 1)})
    assert not checks_at_once({f"k{i}": 1 for i in range(INLINE_CHECK_VALUES)})
    assert checks_at_once({"q": "x" * (INLINE_CHECK_CHARS - 1)})  # the key `q` is the last character
    assert not checks_at_once({"q": "x" * INLINE_CHECK_CHARS})
    assert not checks_at_once({"operations": [{"op": "x"}] * 1000})


def test_admit_hands_back_an_integral_float_as_an_int_and_every_other_value_as_sent(
        validator: InputValidator) -> None:
    sent = {"projectId": "p", "limit": 20.0, "pullRequest": 1e3, "q": "2.0", "snapshotId": "s"}
    verdict = validator.admit("review.search", "review-search-input.schema.json", sent)
    assert verdict == Admitted({"projectId": "p", "limit": 20, "pullRequest": 1000, "q": "2.0", "snapshotId": "s"})
    assert isinstance(verdict, Admitted)
    assert type(verdict.arguments["limit"]) is int and type(verdict.arguments["pullRequest"]) is int
    assert sent["limit"] == 20.0 and type(sent["limit"]) is float  # the caller's mapping is never rewritten


def test_admit_refuses_an_unknown_key_with_the_refusal_text_and_admits_nothing(validator: InputValidator) -> None:
    verdict = validator.admit("review.search", "review-search-input.schema.json", {"projectId": "p", "sortBy": SECRET})
    assert verdict == Refused("Invalid arguments for review.search: unknown key `sortBy` is not accepted by this tool.")


def test_admit_names_the_tool_as_the_caller_named_it_on_its_route(validator: InputValidator) -> None:
    verdict = validator.admit("review.search", "review-search-input.schema.json", {"projectId": "p", "sortBy": 1},
                              shown_as="review_search")
    assert isinstance(verdict, Refused) and verdict.message.startswith("Invalid arguments for review_search: ")


def test_admit_takes_a_query_of_exactly_max_query_chars_and_refuses_one_more(validator: InputValidator) -> None:
    schema = "knowledge-search-input.schema.json"
    at_bound = {"projectId": "p", "query": "q" * MAX_QUERY_CHARS}
    assert validator.admit("knowledge.search", schema, at_bound) == Admitted(at_bound)
    over = validator.admit("knowledge.search", schema, {"projectId": "p", "query": "q" * (MAX_QUERY_CHARS + 1)})
    assert over == Refused(f"Invalid arguments for knowledge.search: `query` violates maxLength {MAX_QUERY_CHARS}; "
                           f"a string of {MAX_QUERY_CHARS + 1} characters was sent.")


def test_a_float_that_is_not_integral_is_refused_where_an_integer_is_typed_never_rounded(
        validator: InputValidator) -> None:
    verdict = validator.admit("review.search", "review-search-input.schema.json", {"projectId": "p", "limit": 2.5})
    assert verdict == Refused(
        "Invalid arguments for review.search: `limit` must be of type integer; a number was sent.")


@pytest.mark.parametrize("arguments", [
    {"projectId": "p", "sortBy": 1}, {"projectId": 3}, {}, [SECRET], {"projectId": "p", "limit": True},
])
def test_problem_is_exactly_the_refusal_admit_answers(validator: InputValidator, arguments: Any) -> None:
    verdict = validator.admit("review.search", "review-search-input.schema.json", arguments)
    assert isinstance(verdict, Refused)
    assert validator.problem("review.search", "review-search-input.schema.json", arguments) == verdict.message
