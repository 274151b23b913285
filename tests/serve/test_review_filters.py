"""The review tools' shared filter checks: each bound admits its own value and refuses one past it, in each tool's
words, and never clamps."""

from collections.abc import Callable

import pytest

from serve.errors import ToolRefusal
from serve.review_filters import MAX_PULL_REQUEST, FilterRules, describe_number
from serve.tools import findings, review, review_concerns, review_similar

RULES = [review.FILTERS, findings.FILTERS, review_similar.FILTERS, review_concerns.FILTERS]


def _refusal(check: Callable[..., object], *args: object) -> str:
    with pytest.raises(ToolRefusal) as refused:
        check(*args)
    return refused.value.message


def test_each_tool_checks_with_its_own_bound_constants() -> None:
    assert (review.FILTERS.max_chars, review.FILTERS.max_limit, review.FILTERS.default_limit) == (
        review.MAX_FILTER_CHARS, review.MAX_REVIEW_SEARCH_LIMIT, review.DEFAULT_REVIEW_SEARCH_LIMIT)
    assert (findings.FILTERS.max_chars, findings.FILTERS.max_limit, findings.FILTERS.default_limit) == (
        findings.MAX_FILTER_CHARS, findings.MAX_FINDINGS_LIMIT, findings.DEFAULT_FINDINGS_LIMIT)
    assert (review_similar.FILTERS.max_chars, review_similar.FILTERS.max_limit) == (
        review.MAX_FILTER_CHARS, review_similar.MAX_FIND_SIMILAR_LIMIT)
    assert [rules.tool for rules in RULES] == [review.TOOL_NAME, findings.TOOL_NAME, review_similar.TOOL_NAME,
                                               review_concerns.TOOL_NAME]


@pytest.mark.parametrize("rules", RULES, ids=lambda rules: rules.tool)
def test_a_string_filter_of_exactly_the_bound_passes_and_one_more_character_is_refused_by_length(
        rules: FilterRules) -> None:
    rules.text("repository", "r" * rules.max_chars)
    text = _refusal(rules.text, "repository", "r" * (rules.max_chars + 1))
    assert text.startswith(f"{rules.tool}: `repository` is bounded at ")
    assert f"a value of {rules.max_chars + 1} characters was sent" in text and "rrr" not in text


@pytest.mark.parametrize("rules", RULES, ids=lambda rules: rules.tool)
def test_a_limit_of_exactly_the_maximum_is_the_page_and_one_more_or_zero_is_refused_never_clamped(
        rules: FilterRules) -> None:
    assert rules.limit(None) == rules.default_limit
    assert rules.limit(1) == 1 and rules.limit(rules.max_limit) == rules.max_limit
    for sent in (0, rules.max_limit + 1):
        assert _refusal(rules.limit, sent).startswith(f"{rules.tool}: `limit` must be between 1 and ")


@pytest.mark.parametrize("rules", RULES, ids=lambda rules: rules.tool)
def test_a_refusal_gives_each_bound_as_its_number_never_as_a_constant_name(rules: FilterRules) -> None:
    over_limit = _refusal(rules.limit, rules.max_limit + 1)
    over_text = _refusal(rules.text, "q", "q" * (rules.max_chars + 1))
    assert f"must be between 1 and {rules.max_limit};" in over_limit or \
        f"must be between 1 and {rules.max_limit} (" in over_limit
    assert f"is bounded at {rules.max_chars} characters;" in over_text
    assert "MAX_" not in over_limit + over_text and "LIMIT" not in over_limit


@pytest.mark.parametrize("rules", [review.FILTERS, findings.FILTERS], ids=lambda rules: rules.tool)
def test_a_pull_request_of_exactly_the_column_maximum_passes_and_one_more_is_refused(rules: FilterRules) -> None:
    rules.pull_request(MAX_PULL_REQUEST)
    rules.pull_request(1)
    rules.pull_request(None)
    for sent in (0, MAX_PULL_REQUEST + 1):
        assert f"`pullRequest` must be between 1 and {MAX_PULL_REQUEST}" in _refusal(rules.pull_request, sent)


def test_review_search_words_give_each_bound_as_its_number_and_never_render_the_number_sent() -> None:
    rules = review.FILTERS
    assert _refusal(rules.limit, 51) == _refusal(rules.limit, 10**40) == (
        "review.search: `limit` must be between 1 and 50; the default is 20. Nothing was "
        "clamped; send a limit in that range.")
    assert _refusal(rules.pull_request, 0) == (
        f"review.search: `pullRequest` must be between 1 and {MAX_PULL_REQUEST}, the range its signed 64-bit column "
        "can hold. Send a pull-request number in that range, or omit the filter.")
    assert _refusal(rules.text, "q", "q" * 401) == (
        "review.search: `q` is bounded at 400 characters; a value of 401 characters was sent. "
        "Shorten it or omit the filter.")
    assert _refusal(rules.in_vocabulary, "threadState", "closed", ("open", "resolved")) == (
        "review.search: `threadState` 'closed' is not one of open, resolved. Use one of those exactly, or omit the "
        "filter.")


def test_review_findings_words_render_a_plausible_number_and_describe_any_other_by_its_digits() -> None:
    rules = findings.FILTERS
    assert _refusal(rules.limit, 101) == (
        "review.findings: `limit` must be between 1 and 100 (default 20); 101 was sent. Nothing was clamped.")
    assert _refusal(rules.pull_request, 10**25).endswith("can hold; a number of 26 digits was sent.")
    assert _refusal(rules.text, "q", "q" * 201).startswith("review.findings: `q` is bounded at 200 characters; ")
    assert _refusal(rules.text, "q", "a\x00b") == (
        "review.findings: `q` contains a NUL (U+0000), which no commit-message line can hold; remove it.")


def test_a_lone_surrogate_is_refused_by_the_tools_that_answer_one_and_left_to_the_input_tier_by_the_others() -> None:
    for rules in (review.FILTERS, findings.FILTERS):
        assert "lone surrogate (U+D800-U+DFFF)" in _refusal(rules.text, "q", "a\ud800b")
    review_similar.FILTERS.text("repository", "a\ud800b")  # the input tier refuses it before this tool runs


def test_a_number_past_every_storable_pull_request_is_described_by_its_digit_count_never_quoted() -> None:
    assert describe_number(MAX_PULL_REQUEST) == str(MAX_PULL_REQUEST)
    assert describe_number(-(10**19)) == "a number of 20 digits"
    assert describe_number(10**40) == "a number of 41 digits"
