"""First-page sizes of a page of pull requests: fixed, or learned from what the repository's previous pages needed.

GitHub charges a query by the requests its connections need, each assumed full (docs.github.com, "Rate limits and
query limits for the GraphQL API"): on a page of P pull requests the reviews and the threads connections are
needed P times whatever their size, and the comments connection of the threads P × threads times. So the number
of thread slots is what costs points; the sizes of the leaf connections (reviews, comments) cost only nodes.
Learning therefore picks the thread slots that minimise the charge for the pull requests seen so far (slots left
empty are charged; threads past the slots cost one follow-up connection per pull request plus one per thread), and
leaf sizes holding the largest connection seen (up to 100), within a node budget per page: a larger leaf page
costs no point and saves a follow-up round.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Final

MAX_PAGE: Final = 100  # GitHub: `first` within 1-100
# A page of pull requests asks for at most this many nodes: a fifth of GitHub's 500,000-node limit per call.
PAGE_NODE_BUDGET: Final = 100_000

@dataclass(frozen=True)
class PageSizes:
    """`first_*`: the first page of each connection inside a page of pull requests; `more_*`: the most a follow-up
    asks for at once (each follow-up is sized from the connection's totalCount, up to this)."""

    pull_requests: int = 100
    first_reviews: int = 25
    first_threads: int = 5
    first_comments: int = 5
    more_reviews: int = MAX_PAGE
    more_threads: int = MAX_PAGE
    more_comments: int = MAX_PAGE

    def page_nodes(self) -> int:
        """The node count GitHub reckons for a page of pull requests of these sizes."""
        pulls = self.pull_requests
        return pulls * (1 + self.first_reviews + self.first_threads * (1 + self.first_comments))


def _thread_charge(threads: int, slots: int) -> int:
    """What one pull request with `threads` threads costs in connection requests with `slots` first-page slots:
    one comments connection per slot, and past the slots one follow-up threads connection per 100 threads plus
    one comments connection per thread."""
    beyond = max(0, threads - slots)
    return slots + (-(-beyond // MAX_PAGE) + beyond if beyond else 0)


def _largest(counts: Counter[int]) -> int:
    """The largest connection seen, within 1..MAX_PAGE."""
    return max(1, min(MAX_PAGE, max(counts, default=1)))


class LearnedSizes:
    """Page sizes that follow the repository's shape: `observe` each completed pull request, `sizes()` before each
    page. Until a pull request has been seen, the starting sizes."""

    def __init__(self, start: PageSizes | None = None) -> None:
        self._start = start or PageSizes()
        self._reviews: Counter[int] = Counter()
        self._threads: Counter[int] = Counter()
        self._comments: Counter[int] = Counter()

    def observe(self, reviews: int, threads: int, comments: list[int]) -> None:
        """One pull request: its reviews' and threads' totalCount, and each thread's comments totalCount."""
        self._reviews[reviews] += 1
        self._threads[threads] += 1
        self._comments.update(comments)

    def sizes(self) -> PageSizes:
        if not self._threads:
            return self._start
        slots = min(range(1, MAX_PAGE + 1),
                    key=lambda s: sum(n * _thread_charge(t, s) for t, n in self._threads.items()))
        learned = replace(self._start, first_threads=slots, first_reviews=_largest(self._reviews),
                          first_comments=_largest(self._comments))
        while learned.page_nodes() > PAGE_NODE_BUDGET and learned.first_comments > 1:
            learned = replace(learned, first_comments=learned.first_comments // 2)
        while learned.page_nodes() > PAGE_NODE_BUDGET and learned.first_reviews > 1:
            learned = replace(learned, first_reviews=learned.first_reviews // 2)
        return learned
