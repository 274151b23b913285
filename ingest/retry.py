"""The one retry policy for every GitHub request (tenacity).

Retried: HTTP 500/502/503/504, timeouts and transient connection errors (connect, read, write, remote protocol
errors; never a local protocol error, which fails the same way every time) with bounded exponential backoff, and rate
limits (403/429 with `Retry-After` or `x-ratelimit-*`, a 403 naming a secondary rate limit, GraphQL
`RATE_LIMITED` in a 200), which wait exactly as long as GitHub asks. Never retried: any other status,
400/401/404/422 above all.
A wait longer than `max_wait` is not taken: the policy stops and says when to come back.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Final, TypeVar

import tenacity

from ingest.errors import GitHubError, RetryableFailure

RETRY_STATUSES: Final = frozenset({500, 502, 503, 504})
NEVER_RETRY_STATUSES: Final = frozenset({400, 401, 404, 422})
MAX_ATTEMPTS: Final = 6
DEFAULT_MAX_WAIT_SECONDS: Final = 3600.0
# The longest `max_wait` an operator may set: a day. GitHub's primary limit resets within the hour; a longer wait
# (or an infinite one, `inf`) is a mistyped number, and a negative or `nan` one would make "a longer wait stops the
# run" mean nothing.
LONGEST_MAX_WAIT_SECONDS: Final = 86_400.0
BACKOFF_FIRST_SECONDS: Final = 1.0
BACKOFF_MAX_SECONDS: Final = 60.0
# GitHub's advice when a secondary rate limit names no wait: at least a minute.
DEFAULT_RATE_LIMIT_WAIT_SECONDS: Final = 60.0

T = TypeVar("T")


def backoff_seconds(attempt: int, max_wait: float) -> float:
    """The wait after failed attempt number `attempt` (1-based): 1, 2, 4, ... seconds, capped."""
    return float(min(BACKOFF_FIRST_SECONDS * 2 ** (attempt - 1), BACKOFF_MAX_SECONDS, max_wait))


def call_with_retries(
    attempt: Callable[[], T],
    *,
    sleep: Callable[[float], None],
    max_wait: float,
    on_retry: Callable[[RetryableFailure, float], None],
    max_attempts: int = MAX_ATTEMPTS,
) -> T:
    """Run `attempt` under the policy; return its result.

    Raises:
        GitHubError: the attempts ran out, or GitHub asked for a wait longer than `max_wait`; the message
            names the last failure.
    """

    def should_retry(state: tenacity.RetryCallState) -> bool:
        failure = state.outcome.exception() if state.outcome else None
        if not isinstance(failure, RetryableFailure):
            return False
        return failure.wait is None or not exceeds_max_wait(failure.wait, max_wait)

    def wait(state: tenacity.RetryCallState) -> float:
        failure = state.outcome.exception() if state.outcome else None
        if isinstance(failure, RetryableFailure) and failure.wait is not None:
            return failure.wait
        return backoff_seconds(state.attempt_number, max_wait)

    def before_sleep(state: tenacity.RetryCallState) -> None:
        failure = state.outcome.exception() if state.outcome else None
        if isinstance(failure, RetryableFailure):
            on_retry(failure, state.upcoming_sleep)

    retrying = tenacity.Retrying(
        retry=should_retry,
        wait=wait,
        stop=tenacity.stop_after_attempt(max_attempts),
        sleep=sleep,
        before_sleep=before_sleep,
        reraise=True,
    )
    try:
        return retrying(attempt)
    except RetryableFailure as failure:
        raise GitHubError(give_up_message(failure, max_wait=max_wait, attempts=max_attempts),
                          status=failure.status) from None


def give_up_message(failure: RetryableFailure, *, max_wait: float, attempts: int) -> str:
    if failure.wait is not None and exceeds_max_wait(failure.wait, max_wait):
        return max_wait_refusal(f"GitHub rate limit ({failure.reason})", failure.wait, max_wait)
    return f"GitHub request failed {attempts} times; last: {failure.reason}"


def exceeds_max_wait(wait: float, max_wait: float) -> bool:
    """Whether a wait GitHub asks for (a Retry-After, a rate budget's reset) is longer than the run may wait: the
    one test of --max-wait, for a retry and for the budget the client keeps."""
    return wait > max_wait


def max_wait_refusal(what: str, wait: float, max_wait: float) -> str:
    """The one line an ingest stops with when `what` asks it to wait `wait` s, past --max-wait: when to run again,
    as a UTC time."""
    back = datetime.now(UTC) + timedelta(seconds=wait)
    return (f"{what} asks to wait {wait:.0f} s, more than --max-wait {max_wait:.0f} s; run again after "
            f"{back.strftime('%Y-%m-%d %H:%M:%S')} UTC")
