"""First-page sizes learned from the repository's shape: thread slots that minimise GitHub's charge, leaf pages
holding the largest connection seen, and the page within its node budget."""

from __future__ import annotations

from ingest.page_sizes import MAX_PAGE, PAGE_NODE_BUDGET, LearnedSizes, PageSizes


def _learned(pulls: list[tuple[int, int, int]]) -> PageSizes:
    """Sizes after observing pull requests given as (reviews, threads, comments in each thread)."""
    learned = LearnedSizes()
    for reviews, threads, comments in pulls:
        learned.observe(reviews, threads, [comments] * threads)
    return learned.sizes()


def test_before_any_pull_request_is_seen_the_starting_sizes_are_used() -> None:
    assert LearnedSizes().sizes() == PageSizes()
    start = PageSizes(first_threads=9)
    assert LearnedSizes(start).sizes() == start


def test_pull_requests_of_three_threads_each_get_three_thread_slots() -> None:
    assert _learned([(1, 3, 2)] * 50).first_threads == 3


def test_a_few_pull_requests_with_150_threads_do_not_buy_slots_for_every_pull_request() -> None:
    """Each slot is charged on every pull request of the page; the tail is cheaper followed up."""
    sizes = _learned([(1, 2, 1)] * 98 + [(1, 150, 1)] * 2)
    assert sizes.first_threads == 2


def test_leaf_pages_hold_the_largest_connection_seen_up_to_githubs_100() -> None:
    assert (_learned([(7, 1, 100)]).first_reviews, _learned([(7, 1, 100)]).first_comments) == (7, 100)
    assert _learned([(101, 1, 101)]).first_comments == MAX_PAGE
    assert _learned([(101, 1, 101)]).first_reviews == MAX_PAGE


def test_a_page_at_exactly_the_node_budget_keeps_its_sizes_and_one_node_past_it_halves_the_comments() -> None:
    at_budget = _learned([(90, 9, 100)] * 10)
    assert (at_budget.first_reviews, at_budget.first_threads, at_budget.first_comments) == (90, 9, 100)
    assert at_budget.page_nodes() == PAGE_NODE_BUDGET
    past = _learned([(91, 9, 100)] * 10)
    assert past.first_comments == 50 and past.page_nodes() <= PAGE_NODE_BUDGET


def test_a_shape_far_past_the_budget_is_brought_within_it() -> None:
    sizes = _learned([(100, 60, 100)] * 10)
    assert sizes.first_threads == 60 and sizes.page_nodes() <= PAGE_NODE_BUDGET
