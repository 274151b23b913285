"""The retry policy, counted on a fake transport (respx) with sleeping patched out."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
import respx

from ingest.api_url import api_url_from
from ingest.client import GitHubClient, graphql_endpoint
from ingest.credentials import token_from_env
from ingest.errors import GitHubError, GitHubNotFoundError, TokenMissingError
from ingest.retry import MAX_ATTEMPTS, max_wait_refusal

API = "https://api.example.test"
TOKEN = "ghp_never_show_this_token"
OK = {"data": {"rateLimit": {"cost": 3, "remaining": 4990, "resetAt": "2026-12-01T00:00:00Z", "nodeCount": 1},
               "viewer": {"login": "x"}}}


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def client(clock: Clock) -> Iterator[GitHubClient]:
    github = GitHubClient(token=TOKEN, api_url=API, max_wait=600, sleep=clock.sleep, clock=clock.time)
    yield github
    github.close()


def route(*responses: httpx.Response | Exception) -> respx.Route:
    return respx.post(f"{API}/graphql").mock(side_effect=list(responses))


@respx.mock
def test_a_502_is_retried_with_exponential_backoff_then_succeeds(client: GitHubClient, clock: Clock) -> None:
    calls = route(httpx.Response(502), httpx.Response(503), httpx.Response(504), httpx.Response(200, json=OK))
    assert client.graphql("query { viewer { login } }", {})["viewer"] == {"login": "x"}
    assert calls.call_count == 4
    assert clock.sleeps == [1.0, 2.0, 4.0]
    assert (client.spend.requests, client.spend.retries, client.spend.points) == (4, 3, 3)


@respx.mock
@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_client_errors_are_never_retried(client: GitHubClient, clock: Clock, status: int) -> None:
    calls = route(httpx.Response(status, json={"message": "no"}), httpx.Response(200, json=OK))
    with pytest.raises(GitHubError) as caught:
        client.graphql("query { viewer { login } }", {})
    assert calls.call_count == 1 and clock.sleeps == []
    assert caught.value.status == status
    assert TOKEN not in caught.value.message


@respx.mock
def test_a_secondary_rate_limit_waits_exactly_the_retry_after(client: GitHubClient, clock: Clock) -> None:
    limited = httpx.Response(403, headers={"retry-after": "17"}, json={"message": "secondary rate limit"})
    calls = route(limited, httpx.Response(200, json=OK))
    client.graphql("query { viewer { login } }", {})
    assert calls.call_count == 2 and clock.sleeps == [17.0]


@respx.mock
def test_a_403_naming_a_secondary_limit_without_headers_waits_a_minute(client: GitHubClient,
                                                                        clock: Clock) -> None:
    limited = httpx.Response(403, json={"message": "You have exceeded a secondary rate limit."})
    route(limited, httpx.Response(200, json=OK))
    client.graphql("query { viewer { login } }", {})
    assert clock.sleeps == [60.0]


@respx.mock
def test_a_429_with_a_reset_time_waits_until_the_reset(client: GitHubClient, clock: Clock) -> None:
    reset = str(int(clock.now) + 42)
    limited = httpx.Response(429, headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}, json={})
    route(limited, httpx.Response(200, json=OK))
    client.graphql("query { viewer { login } }", {})
    assert len(clock.sleeps) == 1 and 0 < clock.sleeps[0] <= 42


@respx.mock
def test_graphql_rate_limited_inside_a_200_is_retried_after_the_reset(client: GitHubClient, clock: Clock) -> None:
    reset = str(int(clock.now) + 30)
    limited = httpx.Response(200, headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset},
                             json={"data": None, "errors": [{"type": "RATE_LIMITED", "message": "slow down"}]})
    calls = route(limited, httpx.Response(200, json=OK))
    client.graphql("query { viewer { login } }", {})
    assert calls.call_count == 2 and clock.sleeps == [30.0]


@respx.mock
def test_timeouts_are_retried_and_the_final_message_names_what_happened(client: GitHubClient,
                                                                         clock: Clock) -> None:
    calls = route(*[httpx.ReadTimeout("slow")] * MAX_ATTEMPTS)
    with pytest.raises(GitHubError) as caught:
        client.graphql("query { viewer { login } }", {})
    assert calls.call_count == MAX_ATTEMPTS
    assert "timed out" in caught.value.message and str(MAX_ATTEMPTS) in caught.value.message
    assert clock.sleeps == [1.0, 2.0, 4.0, 8.0, 16.0]


@respx.mock
def test_a_rate_limit_wait_beyond_max_wait_stops_at_once(client: GitHubClient, clock: Clock) -> None:
    limited = httpx.Response(403, headers={"retry-after": "3601"}, json={"message": "secondary rate limit"})
    calls = route(limited, httpx.Response(200, json=OK))
    with pytest.raises(GitHubError) as caught:
        client.graphql("query { viewer { login } }", {})
    assert calls.call_count == 1 and clock.sleeps == []
    assert "--max-wait" in caught.value.message


@respx.mock
def test_a_low_remaining_budget_waits_for_the_reset_before_the_next_request(client: GitHubClient,
                                                                             clock: Clock) -> None:
    reset = str(int(clock.now) + 120)
    low = httpx.Response(200, headers={"x-ratelimit-remaining": "3", "x-ratelimit-reset": reset},
                         json={"data": {"viewer": {"login": "x"}}})
    calls = route(low, httpx.Response(200, json=OK))
    client.graphql("query { viewer { login } }", {})
    assert clock.sleeps == []
    client.graphql("query { viewer { login } }", {})
    assert calls.call_count == 2 and clock.sleeps == [120.0]


@respx.mock
def test_a_rate_budget_wait_beyond_max_wait_is_refused_in_the_words_of_a_retry_naming_the_utc_time(
        clock: Clock) -> None:
    """The budget the client keeps and a retry's Retry-After ask the same question of --max-wait: one answer,
    which says when to run again (the budget's used to say only "after the reset")."""
    github = GitHubClient(token=TOKEN, api_url=API, max_wait=60, sleep=clock.sleep, clock=clock.time)
    reset = str(int(clock.now) + 3500)
    low = httpx.Response(200, headers={"x-ratelimit-remaining": "10", "x-ratelimit-reset": reset},
                         json={"data": {"viewer": {"login": "x"}}})
    calls = route(low, httpx.Response(200, json=OK))
    try:
        github.graphql("query { viewer { login } }", {})
        with pytest.raises(GitHubError) as caught:
            github.graphql("query { viewer { login } }", {})
    finally:
        github.close()
    assert calls.call_count == 1 and clock.sleeps == []
    expected = max_wait_refusal("GitHub rate budget (down to 10 points)", 3500.0, 60)
    assert caught.value.message[:-len("YYYY-MM-DD HH:MM:SS UTC")] == expected[:-len("YYYY-MM-DD HH:MM:SS UTC")]
    assert re.fullmatch(r".*; run again after \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", caught.value.message)


@respx.mock
def test_a_wait_for_the_rate_budget_is_announced_before_it_starts(clock: Clock) -> None:
    """An hour's wait with nothing printed looked like a hang."""
    told: list[tuple[str, float, int]] = []
    github = GitHubClient(token=TOKEN, api_url=API, max_wait=7200, sleep=clock.sleep, clock=clock.time,
                          on_wait=lambda reason, wait: told.append((reason, wait, len(clock.sleeps))))
    reset = str(int(clock.now) + 3500)
    low = httpx.Response(200, headers={"x-ratelimit-remaining": "10", "x-ratelimit-reset": reset},
                         json={"data": {"viewer": {"login": "x"}}})
    route(low, httpx.Response(200, json=OK))
    try:
        github.graphql("query { viewer { login } }", {})
        github.graphql("query { viewer { login } }", {})
    finally:
        github.close()
    assert told == [("GitHub rate budget is down to 10 points", 3500.0, 0)] and clock.sleeps == [3500.0]


@respx.mock
def test_graphql_not_found_is_its_own_error_and_other_errors_are_not_retried(client: GitHubClient) -> None:
    route(httpx.Response(200, json={"data": {"node": None}, "errors": [{"type": "NOT_FOUND", "message": "x"}]}),
          httpx.Response(200, json={"data": None, "errors": [{"type": "FORBIDDEN", "message": "y"}]}))
    with pytest.raises(GitHubNotFoundError):
        client.graphql("query { viewer { login } }", {})
    with pytest.raises(GitHubError) as caught:
        client.graphql("query { viewer { login } }", {})
    assert "FORBIDDEN" in caught.value.message


@respx.mock
def test_requests_carry_the_token_and_ask_for_next_format_node_ids(client: GitHubClient) -> None:
    calls = route(httpx.Response(200, json=OK))
    client.graphql("query { viewer { login } }", {"a": 1})
    request = calls.calls.last.request
    assert TOKEN in request.headers["authorization"]
    assert request.headers["x-github-next-global-id"] == "1"


def test_the_token_comes_from_github_token_then_gh_token_and_its_absence_is_explained() -> None:
    assert token_from_env({"GITHUB_TOKEN": "a", "GH_TOKEN": "b"}) == "a"
    assert token_from_env({"GH_TOKEN": "b"}) == "b"
    with pytest.raises(TokenMissingError) as caught:
        token_from_env({"GITHUB_TOKEN": "  "})
    assert "GITHUB_TOKEN" in caught.value.message and "GH_TOKEN" in caught.value.message


def test_enterprise_and_loopback_api_urls_find_their_graphql_endpoint() -> None:
    assert graphql_endpoint("https://ghe.example/api/v3") == "https://ghe.example/api/graphql"
    assert graphql_endpoint("http://127.0.0.1:9") == "http://127.0.0.1:9/graphql"
    assert api_url_from(None, {"GITHUB_API_URL": "http://127.0.0.1:9/"}) == "http://127.0.0.1:9"
    assert api_url_from("https://x.test", {"GITHUB_API_URL": "http://y"}) == "https://x.test"


@respx.mock
def test_a_local_protocol_error_is_never_retried_and_the_message_is_one_line_without_the_token(
        client: GitHubClient, clock: Clock) -> None:
    # What httpx raises for a token holding a newline: h11 refuses the header before anything is sent.
    calls = route(*[httpx.LocalProtocolError(f"Illegal header value b'bearer {TOKEN}\\n'")] * MAX_ATTEMPTS)
    with pytest.raises(GitHubError) as caught:
        client.graphql("query { viewer { login } }", {})
    assert calls.call_count == 1 and clock.sleeps == [] and client.spend.retries == 0
    message = caught.value.message
    assert "\n" not in message and TOKEN not in message and "LocalProtocolError" in message


@respx.mock
@pytest.mark.parametrize("error", [httpx.ConnectError("refused"), httpx.ReadError("reset"),
                                   httpx.RemoteProtocolError("peer closed"), httpx.ConnectTimeout("slow")])
def test_connection_level_transient_errors_are_retried(client: GitHubClient, clock: Clock,
                                                       error: Exception) -> None:
    calls = route(error, httpx.Response(200, json=OK))
    assert client.graphql("query { viewer { login } }", {})["viewer"] == {"login": "x"}
    assert calls.call_count == 2 and clock.sleeps == [1.0]


def test_a_token_holding_a_newline_is_refused_before_any_request_and_never_shown() -> None:
    for name in ("GITHUB_TOKEN", "GH_TOKEN"):
        with pytest.raises(TokenMissingError) as caught:
            token_from_env({name: "ghp_first_half\nsecond_half"})
        message = caught.value.message
        assert name in message and "\n" not in message and "first_half" not in message and "second_half" not in message
