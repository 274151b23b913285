"""The GitHub API URL an ingest sends its token to: https anywhere, plain http only to a loopback host."""

from __future__ import annotations

from pathlib import Path

import pytest
import respx

from ingest import allowlist
from ingest.api_url import API_URL_ENV, api_url_from
from tests.support.cli_app import invoke
from tests.support.installation import Installation
from theurian.errors import UsageError
from theurian.project import init_project

TOKEN = "ghp_never_send_this_over_plain_http"


@pytest.mark.parametrize("url", ["http://127.0.0.1:9", "http://127.3.2.1:9/api/v3", "http://[::1]:9",
                                 "http://localhost:9", "http://LOCALHOST:9", "https://ghe.example/api/v3",
                                 "https://api.github.com"])
def test_https_anywhere_and_plain_http_to_a_loopback_host_are_accepted(url: str) -> None:
    assert api_url_from(url, {}) == url


@pytest.mark.parametrize("url", ["http://ghe.example/api/v3", "http://10.0.0.1:9", "http://128.0.0.1",
                                 "http://127.0.0.1.evil.example", "http://127.0.0.1@evil.example",
                                 "http://localhost.evil.example", "http://[::ffff:0a00:0001]:9", "http://0.0.0.0"])
def test_plain_http_to_a_host_that_is_not_loopback_is_refused_naming_the_cure(url: str) -> None:
    with pytest.raises(UsageError) as caught:
        api_url_from(url, {})
    message = caught.value.message
    assert "plain http to a host that is not loopback" in message and "https://HOST/api/v3" in message
    assert message.startswith("--api-url ")


def test_a_refused_url_from_the_environment_is_named_by_its_variable() -> None:
    with pytest.raises(UsageError) as caught:
        api_url_from(None, {API_URL_ENV: "http://ghe.example/api/v3"})
    assert caught.value.message.startswith(f"{API_URL_ENV} 'http://ghe.example/api/v3' is plain http")


@respx.mock(assert_all_mocked=True, assert_all_called=False)
def test_review_ingest_to_a_plain_http_host_that_is_not_loopback_sends_no_request(
        respx_mock: respx.MockRouter, installation: Installation, tmp_path: Path) -> None:
    anything = respx_mock.route()  # every request a run could send, to any host: none may be
    root = tmp_path / "project"
    root.mkdir()
    init_project(root)
    allowlist.allow(root, allowlist.parse_repository("Acme/Widgets"))
    env = installation.env | {"GITHUB_TOKEN": TOKEN, API_URL_ENV: "http://ghe.example/api/v3"}
    with installation.in_process():
        result = invoke(["review", "ingest", "--max-wait", "0", "--project", str(root)], env=env)
    assert isinstance(result.exception, UsageError), result.output
    assert "plain http to a host that is not loopback" in result.exception.message
    assert not anything.called and respx_mock.calls.call_count == 0
