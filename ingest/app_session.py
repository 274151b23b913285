"""A GitHub App's session inside the client: where githubkit keeps its JWT and installation token, and what a
failed token exchange means to an operator.

githubkit's AppInstallationAuthStrategy asks `POST /app/installations/{id}/access_tokens` (with a JWT) before the
first request and again once the cached installation token is within a minute of its `expires_at`; it keeps
both in the client's cache strategy. `SessionCache` is that cache on the client's own clock, so a test can move
time past an hour without waiting one. The exchange runs inside httpx's auth flow, so its failure reaches the
client wrapped in githubkit's RequestError: `token_exchange_failure` turns it into one line naming the app.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Final

from githubkit.cache import MemCacheStrategy
from githubkit.cache.base import AsyncBaseCache, BaseCache
from githubkit.exception import RequestFailed

from ingest.errors import GitHubAppError, RetryableFailure
from ingest.retry import RETRY_STATUSES

if TYPE_CHECKING:
    from ingest.credentials import AppInstallation

TOKEN_EXCHANGE_SUFFIX: Final = "/access_tokens"  # noqa: S105 - a route, not a secret


class _ClockedCache(AsyncBaseCache, BaseCache):
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._items: dict[str, tuple[str, float]] = {}

    def get(self, key: str) -> str | None:
        value, expires = self._items.get(key, ("", 0.0))
        return value if value and self._clock() < expires else None

    def set(self, key: str, value: str, ex: timedelta) -> None:
        self._items[key] = (value, self._clock() + ex.total_seconds())

    async def aget(self, key: str) -> str | None:
        return self.get(key)

    async def aset(self, key: str, value: str, ex: timedelta) -> None:
        self.set(key, value, ex)


class SessionCache(MemCacheStrategy):
    """githubkit's memory cache strategy, its key-value store reading `clock` (seconds, as `time.time`)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        super().__init__()
        self._clocked = _ClockedCache(clock)

    def get_cache_storage(self) -> _ClockedCache:  # type: ignore[override]
        return self._clocked

    async def get_async_cache_storage(self) -> _ClockedCache:  # type: ignore[override]
        return self._clocked


def token_exchange_failure(cause: Exception, app: AppInstallation) -> Exception | None:
    """What a failure inside githubkit's auth flow means: a GitHubAppError naming the app (or a RetryableFailure
    for a 5xx answer to the exchange), or None when `cause` is not the token exchange's."""
    if isinstance(cause, RequestFailed):
        raw = cause.response.raw_response
        if not raw.request.url.path.endswith(TOKEN_EXCHANGE_SUFFIX):
            return None
        status = raw.status_code
        if status in RETRY_STATUSES:
            return RetryableFailure(f"HTTP {status} {raw.reason_phrase} to the installation token request",
                                    status=status)
        said = _github_message(cause)
        if status == 401:
            return GitHubAppError(
                f"GitHub refused the app's JSON web token (HTTP 401: {said}): {app.key_file} is not the private "
                f"key of GitHub App {app.app_id}, or app_id is not that app's", status=status)
        if status == 404:
            return GitHubAppError(
                f"GitHub App {app.app_id} has no installation {app.installation_id} (HTTP 404: {said}): check "
                "installation_id (the number at the end of the installation's settings URL)", status=status)
        return GitHubAppError(f"GitHub refused an installation token for installation {app.installation_id} of "
                              f"GitHub App {app.app_id} (HTTP {status}: {said})", status=status)
    if isinstance(cause, ValueError):  # pydantic's or the date parse's: the answer is not an installation token
        return GitHubAppError(f"GitHub's answer to the installation token request for GitHub App {app.app_id} "
                              f"is not an installation token ({type(cause).__name__})")
    return None


def _github_message(failure: RequestFailed) -> str:
    try:
        body = failure.response.raw_response.json()
    except ValueError:
        return failure.response.raw_response.reason_phrase
    message = body.get("message") if isinstance(body, dict) else None
    return str(message)[:200] if message else failure.response.raw_response.reason_phrase
