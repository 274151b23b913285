"""An ingest signed in as a GitHub App installation, against the loopback fake: the JWT GitHub would check, the
installation token on every GraphQL request, its renewal before it expires, and a wrong key refused in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evidence.lake import Lake
from ingest.client import GitHubClient
from ingest.credentials import AppInstallation, read_private_key
from ingest.errors import GitHubAppError
from ingest.run import RepositoryRun, RunOptions
from tests.support.fake_github import FakeGitHub
from tests.support.fake_github_app import TOKEN_LIFETIME_SECONDS, FakeGitHubApp, SimulatedClock, rsa_key_pair
from tests.support.github_corpus import PUBLIC_REPOSITORY, load_fixture

APP_ID, INSTALLATION_ID = 424242, 7890123


@pytest.fixture(scope="module")
def keys() -> tuple[bytes, bytes]:
    return rsa_key_pair()


def _app(tmp_path: Path, private_pem: bytes, installation_id: int = INSTALLATION_ID) -> AppInstallation:
    key_file = tmp_path / "app.pem"
    key_file.write_bytes(private_pem)
    key_file.chmod(0o600)
    return AppInstallation(APP_ID, installation_id, key_file, read_private_key(key_file))


def _answer_as_the_app(fake: FakeGitHub, keys: tuple[bytes, bytes], clock: SimulatedClock) -> FakeGitHubApp:
    """`fake` also answers as GitHub for the app APP_ID installed as INSTALLATION_ID, whose public key is keys[1]."""
    fake.app = FakeGitHubApp(app_id=APP_ID, installation_id=INSTALLATION_ID, public_key_pem=keys[1], clock=clock.now)
    return fake.app


class AgingGitHub(FakeGitHub):
    """Moves the clock on by `step` seconds after every GraphQL answer: a long ingest in a few requests."""

    def __init__(self, corpus: dict[str, Any], clock: SimulatedClock, step: float) -> None:
        super().__init__(corpus)
        self.clock, self.step = clock, step

    def answer(self, query: str, v: dict[str, Any]) -> tuple[dict[str, Any], int]:
        self.clock.advance(self.step)
        return super().answer(query, v)


def _ingest(root: Path, fake: FakeGitHub, app: AppInstallation, clock: SimulatedClock) -> dict[str, Any]:
    (root / ".theurian").mkdir(parents=True, exist_ok=True)
    with fake.running():
        client = GitHubClient(token=app, api_url=fake.url, max_wait=0, clock=clock.now)
        try:
            return RepositoryRun(Lake(root), client, PUBLIC_REPOSITORY, RunOptions(full=True)).run()
        finally:
            client.close()


def test_the_ingest_signs_in_with_a_jwt_of_the_app_and_sends_only_the_installation_token(
        tmp_path: Path, keys: tuple[bytes, bytes]) -> None:
    clock = SimulatedClock()
    fake = FakeGitHub(load_fixture())
    github_app = _answer_as_the_app(fake, keys, clock)
    manifest = _ingest(tmp_path / "project", fake, _app(tmp_path, keys[0]), clock)
    assert manifest["status"] == "completed" and manifest["pullRequests"] > 0
    [claims] = github_app.exchanges  # one token for a run well inside its hour
    assert claims["iss"] == str(APP_ID) and claims["exp"] - claims["iat"] <= 600
    assert github_app.refusals == []
    [token] = github_app.tokens
    assert set(fake.authorizations) == {f"token {token}"}
    assert fake.requests == manifest["requests"]  # the exchange is not a GraphQL request


def test_the_installation_token_is_renewed_before_it_expires_in_a_run_longer_than_its_life(
        tmp_path: Path, keys: tuple[bytes, bytes]) -> None:
    clock = SimulatedClock()
    # Every second request lands 30 s before the token in use expires: renewed, or sent in its last minute.
    fake = AgingGitHub(load_fixture(), clock, step=(TOKEN_LIFETIME_SECONDS - 30) / 2)
    github_app = _answer_as_the_app(fake, keys, clock)
    manifest = _ingest(tmp_path / "project", fake, _app(tmp_path, keys[0]), clock)
    assert manifest["status"] == "completed"  # the fake answers an expired token 401: none was ever sent
    assert manifest["requests"] >= 3 and len(github_app.exchanges) >= 2
    assert github_app.least_life_left is not None and github_app.least_life_left >= 60
    assert len(set(fake.authorizations)) == len(github_app.exchanges)


def test_a_key_that_is_not_the_apps_is_refused_in_one_line_before_any_graphql_request(
        tmp_path: Path, keys: tuple[bytes, bytes]) -> None:
    other_private, _ = rsa_key_pair()
    clock = SimulatedClock()
    fake = FakeGitHub(load_fixture())
    github_app = _answer_as_the_app(fake, keys, clock)
    app = _app(tmp_path, other_private)
    with pytest.raises(GitHubAppError) as raised:
        _ingest(tmp_path / "project", fake, app, clock)
    message = raised.value.message
    assert raised.value.status == 401 and "\n" not in message
    assert message == (f"GitHub refused the app's JSON web token (HTTP 401: A JSON web token could not be "
                       f"decoded): {app.key_file} is not the private key of GitHub App {APP_ID}, or app_id is not "
                       "that app's")
    assert fake.requests == 0 and github_app.refusals == ["InvalidSignatureError"]
    assert "PRIVATE KEY" not in message


def test_an_installation_the_app_does_not_have_is_refused_naming_installation_id(
        tmp_path: Path, keys: tuple[bytes, bytes]) -> None:
    clock = SimulatedClock()
    fake = FakeGitHub(load_fixture())
    _answer_as_the_app(fake, keys, clock)
    with pytest.raises(GitHubAppError) as raised:
        _ingest(tmp_path / "project", fake, _app(tmp_path, keys[0], installation_id=INSTALLATION_ID + 1), clock)
    assert raised.value.status == 404 and "check installation_id" in raised.value.message
    assert fake.requests == 0
