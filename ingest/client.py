"""The GitHub client: githubkit for HTTP, the one retry policy, and an account of what was spent.

Only `GitHubClient` talks to the network. The credentials (`ingest.credentials`: a token, or a GitHub App
installation whose token githubkit fetches and renews) go to githubkit and nowhere else: no message, log line or
file this module writes contains a token or a key.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import httpx
from githubkit import GitHub
from githubkit.exception import RateLimitExceeded, RequestError, RequestFailed, RequestTimeout

from ingest.api_url import DEFAULT_API_URL
from ingest.app_session import SessionCache, token_exchange_failure
from ingest.credentials import AppInstallation, Credentials
from ingest.errors import GitHubError, GitHubNotFoundError, RetryableFailure
from ingest.retry import (
    DEFAULT_MAX_WAIT_SECONDS,
    DEFAULT_RATE_LIMIT_WAIT_SECONDS,
    RETRY_STATUSES,
    call_with_retries,
    exceeds_max_wait,
    max_wait_refusal,
)

DEFAULT_TIMEOUT_SECONDS: Final = 30.0
# Below this many points left, wait for the reset instead of spending the last of the budget on a failure.
LOW_BUDGET_POINTS: Final = 25
RATE_LIMITED_TYPES: Final = frozenset({"RATE_LIMITED", "RATE_LIMIT"})
# Ask for next-format node ids everywhere: legacy base64 ids may hold '/' and '+', which cannot name a file.
REQUEST_HEADERS: Final = {"X-Github-Next-Global-ID": "1"}
# Transport errors another attempt may fix: the connection failed, broke, or the server broke the protocol.
# Anything else (httpx.LocalProtocolError above all: this side built a request HTTP cannot carry, such as a
# header holding a newline) fails the same way every time and is never retried.
TRANSIENT_TRANSPORT_ERRORS: Final = (
    httpx.TimeoutException, httpx.ConnectError, httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError,
)


def graphql_endpoint(api_url: str) -> str:
    """`<api>/graphql`, or `/api/graphql` for a GitHub Enterprise base ending in `/api/v3`."""
    if api_url.endswith("/api/v3"):
        return api_url.removesuffix("/api/v3") + "/api/graphql"
    return api_url + "/graphql"


@dataclass
class Spend:
    requests: int = 0
    points: int = 0
    retries: int = 0


class GitHubClient:
    """GraphQL over githubkit with the retry policy; `spend` counts requests, points and retries."""

    def __init__(
        self,
        *,
        token: Credentials,
        api_url: str = DEFAULT_API_URL,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        max_wait: float = DEFAULT_MAX_WAIT_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        on_retry: Callable[[str, float], None] | None = None,
        on_wait: Callable[[str, float], None] | None = None,
    ) -> None:
        # The session cache holds an app's JWT and installation token until githubkit renews them (a minute before
        # the token expires), on this client's clock.
        auth = token.strategy() if isinstance(token, AppInstallation) else token
        self._app = token if isinstance(token, AppInstallation) else None
        self._github = GitHub(auth, base_url=api_url + "/", timeout=timeout, auto_retry=False, http_cache=False,
                              cache_strategy=SessionCache(clock))
        # Entered, githubkit keeps one HTTP client (its connection pool and TLS context) for every request;
        # otherwise it builds a new one per request, some 70 ms each. `close` leaves it.
        self._github.__enter__()  # type: ignore[no-untyped-call]
        self._endpoint = graphql_endpoint(api_url)
        self._max_wait = max_wait
        self._sleep = sleep
        self._clock = clock
        self._on_retry = on_retry
        self._on_wait = on_wait  # told before a wait for the rate budget, so a long one is never silent
        self._remaining: int | None = None
        self._reset_at: float | None = None
        self.spend = Spend()

    def graphql(self, document: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        """Send one GraphQL document; return its `data`.

        Raises:
            GitHubNotFoundError: GraphQL answered NOT_FOUND.
            GitHubError: GitHub refused the request, or the retry policy gave up.
        """
        self._wait_for_budget()
        payload = {"query": document, "variables": dict(variables)}

        def note_retry(failure: RetryableFailure, wait: float) -> None:
            self.spend.retries += 1
            if self._on_retry is not None:
                self._on_retry(failure.reason, wait)

        return call_with_retries(
            lambda: self._attempt(payload), sleep=self._sleep, max_wait=self._max_wait, on_retry=note_retry
        )

    def _wait_for_budget(self) -> None:
        if self._remaining is None or self._reset_at is None or self._remaining >= LOW_BUDGET_POINTS:
            return
        wait = max(0.0, self._reset_at - self._clock())
        if exceeds_max_wait(wait, self._max_wait):
            raise GitHubError(max_wait_refusal(f"GitHub rate budget (down to {self._remaining} points)", wait,
                                               self._max_wait))
        if self._on_wait is not None:
            self._on_wait(f"GitHub rate budget is down to {self._remaining} points", wait)
        self._sleep(wait)
        self._remaining = None

    def _attempt(self, payload: dict[str, Any]) -> dict[str, Any]:
        self.spend.requests += 1
        try:
            response = self._github.request("POST", self._endpoint, json=payload, headers=REQUEST_HEADERS)
        except RateLimitExceeded as exc:
            status = exc.response.status_code
            wait = self._reset_wait(exc.response.raw_response.headers)
            raise RetryableFailure(f"HTTP {status} rate limited", wait=wait, status=status) from None
        except RequestFailed as exc:
            raise self._failure(exc.response.raw_response) from None
        except RequestTimeout:
            raise RetryableFailure("the request timed out") from None
        except RequestError as exc:
            if self._app is not None and (failure := token_exchange_failure(exc.exc, self._app)) is not None:
                raise failure from None
            kind = type(exc.exc).__name__  # never str(exc): httpx may quote the offending header, token included
            if isinstance(exc.exc, TRANSIENT_TRANSPORT_ERRORS):
                raise RetryableFailure(f"network error ({kind})") from None
            if isinstance(exc.exc, httpx.LocalProtocolError):
                raise GitHubError(
                    f"the request to GitHub could not be sent ({kind}: it is not valid HTTP, as when the token "
                    "holds a newline or another control character); not retried"
                ) from None
            raise GitHubError(f"the request to GitHub failed ({kind}); not retried") from None
        raw = response.raw_response
        self._note_budget(raw.headers)
        try:
            body = raw.json()
        except ValueError:
            raise RetryableFailure(f"HTTP {raw.status_code} with a body that is not JSON") from None
        return self._data(body, raw.headers)

    def _failure(self, raw: httpx.Response) -> Exception:
        status = raw.status_code
        if status in RETRY_STATUSES:
            return RetryableFailure(f"HTTP {status} {raw.reason_phrase}", status=status)
        if status in (403, 429) and "rate limit" in raw.text.lower():
            return RetryableFailure(f"HTTP {status} secondary rate limit", status=status,
                                    wait=self._reset_wait(raw.headers))
        refused = ("the app's installation token was refused" if self._app is not None
                   else "the token was refused: check GITHUB_TOKEN / GH_TOKEN")
        hint = {401: f" ({refused})"}.get(status, "")
        return GitHubError(f"GitHub answered HTTP {status} {raw.reason_phrase}{hint}", status=status)

    def _reset_wait(self, headers: httpx.Headers) -> float:
        if "retry-after" in headers and headers["retry-after"].strip().isdigit():
            return float(headers["retry-after"])
        if "x-ratelimit-reset" in headers and headers["x-ratelimit-reset"].strip().isdigit():
            return max(0.0, float(headers["x-ratelimit-reset"]) - self._clock())
        return DEFAULT_RATE_LIMIT_WAIT_SECONDS

    def _note_budget(self, headers: httpx.Headers) -> None:
        remaining, reset = headers.get("x-ratelimit-remaining", ""), headers.get("x-ratelimit-reset", "")
        if remaining.isdigit() and reset.isdigit():
            self._remaining, self._reset_at = int(remaining), float(reset)

    def _data(self, body: Any, headers: httpx.Headers) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise RetryableFailure("a GraphQL answer that is not a JSON object")
        errors = body.get("errors") or []
        types = {str(e.get("type")) for e in errors if isinstance(e, dict)}
        if types & RATE_LIMITED_TYPES:
            raise RetryableFailure("GraphQL RATE_LIMITED", wait=self._reset_wait(headers))
        if errors:
            first = errors[0] if isinstance(errors[0], dict) else {}
            kind = first.get("type") or "UNKNOWN"
            message = f"GitHub GraphQL error {kind}: {str(first.get('message'))[:200]}"
            raise (GitHubNotFoundError if types == {"NOT_FOUND"} else GitHubError)(message)
        data = body.get("data")
        if not isinstance(data, dict):
            raise GitHubError("GitHub GraphQL answer without data")
        rate = data.get("rateLimit")
        if isinstance(rate, dict) and isinstance(rate.get("cost"), int):
            self.spend.points += rate["cost"]
            if isinstance(rate.get("remaining"), int):
                self._remaining = rate["remaining"]
        return data

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._github.__exit__(None, None, None)
