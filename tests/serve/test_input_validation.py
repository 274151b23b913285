"""The SEC-12 tier in isolation: what it refuses, what it names, and that it never echoes a value."""

import pytest

from serve.validation import InputValidator

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


def test_an_overlong_unknown_key_is_described_by_length(validator: InputValidator) -> None:
    problem = validator.problem("project.list", "project-list-input.schema.json", {"k" * 500: 1})
    assert problem is not None and "a key of 500 characters" in problem and "k" * 81 not in problem


@pytest.mark.parametrize("tool, schema", [("project.list", "project-list-input.schema.json"),
                                          ("system.capabilities", "system-capabilities-input.schema.json")])
def test_tools_without_arguments_refuse_any_argument(validator: InputValidator, tool: str, schema: str) -> None:
    assert validator.problem(tool, schema, {}) is None
    problem = validator.problem(tool, schema, {"projectId": SECRET})
    assert problem is not None and "`projectId`" in problem and SECRET not in problem


def test_a_wrong_type_names_the_key_and_the_expected_type(validator: InputValidator) -> None:
    problem = validator.problem("review.search", "review-search-input.schema.json",
                                {"projectId": "p", "limit": SECRET})
    assert problem == "Invalid arguments for review.search: `limit` must be of type integer."


def test_a_boolean_is_not_an_integer(validator: InputValidator) -> None:
    problem = validator.problem("review.search", "review-search-input.schema.json", {"projectId": "p", "limit": True})
    assert problem is not None and "`limit` must be of type integer" in problem


def test_a_missing_project_id_is_refused_never_defaulted(validator: InputValidator) -> None:
    problem = validator.problem("review.search", "review-search-input.schema.json", {"q": SECRET})
    assert problem == "Invalid arguments for review.search: missing required key `projectId`."


def test_a_query_past_max_query_chars_is_refused_at_the_wire_without_echo(validator: InputValidator) -> None:
    schema = "knowledge-search-input.schema.json"
    assert validator.problem("knowledge.search", schema, {"projectId": "p", "query": "q" * 2000}) is None
    problem = validator.problem("knowledge.search", schema, {"projectId": "p", "query": "q" * 2001})
    assert problem == "Invalid arguments for knowledge.search: `query` violates maxLength 2000."


def test_a_closed_category_is_refused_at_the_wire_with_its_key_path(validator: InputValidator) -> None:
    args = {"projectId": "p", "repository": "o/n", "recordKey": "k", "fixCommit": "a" * 40, "itemId": "i",
            "title": "t", "body": "b", "kind": "convention", "category": SECRET, "owner": "o", "author": "a"}
    problem = validator.problem("review.generateKnowledgeCandidate",
                                "review-generate-knowledge-candidate-input.schema.json", args)
    assert problem is not None and problem.startswith(
        "Invalid arguments for review.generateKnowledgeCandidate: `category` must be one of: specification-gap,")
    assert SECRET not in problem


def test_a_nested_violation_names_the_nested_path(validator: InputValidator) -> None:
    args = {"projectId": "p", "repository": "o/n", "recordKey": "k", "fixCommit": "a" * 40, "itemId": "i",
            "title": "t", "body": "b", "kind": "convention", "category": "testing-rule", "owner": "o",
            "author": "a", "evidenceTrail": ["fine", 7]}
    problem = validator.problem("review.generateKnowledgeCandidate",
                                "review-generate-knowledge-candidate-input.schema.json", args)
    assert problem == ("Invalid arguments for review.generateKnowledgeCandidate: "
                       "`evidenceTrail[1]` must be of type string.")


def test_arguments_that_are_not_an_object_are_refused(validator: InputValidator) -> None:
    problem = validator.problem("review.search", "review-search-input.schema.json", [SECRET])
    assert problem == "Invalid arguments for review.search: the arguments must be a JSON object."
