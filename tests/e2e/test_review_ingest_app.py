"""`theurian review ingest` and `theurian doctor` signed in as a GitHub App installation named in the installation
config, through the real CLI against the loopback fake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.review_ingest_support import new_project, small_corpus
from tests.support.fake_github import FakeGitHub
from tests.support.fake_github_app import FakeGitHubApp, configure_app, rsa_key_pair
from tests.support.github_corpus import PUBLIC_REPOSITORY, load_fixture
from tests.support.installation import Installation

APP_ID, INSTALLATION_ID = 31337, 2718281


@pytest.fixture(scope="module")
def keys() -> tuple[bytes, bytes]:
    return rsa_key_pair()


def _fake(public_pem: bytes) -> FakeGitHub:
    fake = FakeGitHub(small_corpus(load_fixture()))
    fake.app = FakeGitHubApp(app_id=APP_ID, installation_id=INSTALLATION_ID, public_key_pem=public_pem)
    return fake


def _ingest(installation: Installation, project: Path, fake: FakeGitHub) -> tuple[int, str, str]:
    # GITHUB_TOKEN is set too: the app named in the config is what signs in.
    result = installation.cli("review", "ingest", "--json", "--max-wait", "0", "--project", str(project),
                              extra_env={"GITHUB_API_URL": fake.url, "GITHUB_TOKEN": "ghp_not_used"})
    return result.returncode, result.stdout, result.stderr


def test_the_ingest_runs_as_the_configured_app_installation_and_doctor_says_so(
        installation: Installation, tmp_path: Path, keys: tuple[bytes, bytes]) -> None:
    key_file = configure_app(installation.home / "config", keys[0], app_id=APP_ID, installation_id=INSTALLATION_ID)
    project = new_project(installation, tmp_path / "project", PUBLIC_REPOSITORY)
    with _fake(keys[1]).running() as fake:
        code, stdout, stderr = _ingest(installation, project, fake)
        assert code == 0, stderr
        [run] = json.loads(stdout)["summary"]["runs"]
        assert run["status"] == "completed" and run["pullRequests"] == 6
        assert fake.app is not None and len(fake.app.exchanges) == 1
        assert set(fake.authorizations) == {f"token {token}" for token in fake.app.tokens}
        doctor = installation.cli("doctor", "--json", "--online", extra_env={"GITHUB_API_URL": fake.url,
                                                                            "GITHUB_TOKEN": "ghp_not_used"})
    checks = {c["check"]: c for c in json.loads(doctor.stdout)["summary"]["checks"]}
    assert checks["github app"] == {
        "check": "github app", "level": "ok", "cure": "",
        "state": f"signs in as GitHub App {APP_ID}, installation {INSTALLATION_ID} (key {key_file}); "
                 "GITHUB_TOKEN is set and not used"}
    assert "github token" not in checks
    assert checks["github api"]["level"] == "ok" and "points left" in checks["github api"]["state"]
    assert "PRIVATE KEY" not in doctor.stdout + stdout + stderr and "ghp_not_used" not in doctor.stdout


def test_a_wrong_key_is_refused_in_one_line_and_nothing_is_ingested(
        installation: Installation, tmp_path: Path, keys: tuple[bytes, bytes]) -> None:
    key_file = configure_app(installation.home / "config", rsa_key_pair()[0], app_id=APP_ID,
                             installation_id=INSTALLATION_ID)
    project = new_project(installation, tmp_path / "project", PUBLIC_REPOSITORY)
    with _fake(keys[1]).running() as fake:
        code, stdout, stderr = _ingest(installation, project, fake)
        online = installation.cli("doctor", "--json", "--online", extra_env={"GITHUB_API_URL": fake.url})
    assert code == 1 and "Traceback" not in stderr
    [line] = [line for line in stderr.splitlines() if "JSON web token" in line]
    assert f"{key_file} is not the private key of GitHub App {APP_ID}" in line
    assert fake.requests == 0 and not list((project / ".theurian/review").glob("sha256-*"))
    checks = {c["check"]: c for c in json.loads(online.stdout)["summary"]["checks"]}
    assert checks["github app"]["level"] == "ok"  # the key is a good RSA key: only GitHub can tell it is not the app's
    assert checks["github api"]["level"] == "fail" and "JSON web token" in checks["github api"]["state"]


def test_a_key_file_open_to_others_is_refused_before_any_request_and_doctor_names_the_cure(
        installation: Installation, tmp_path: Path, keys: tuple[bytes, bytes]) -> None:
    key_file = configure_app(installation.home / "config", keys[0], app_id=APP_ID, installation_id=INSTALLATION_ID,
                             mode=0o644)
    project = new_project(installation, tmp_path / "project", PUBLIC_REPOSITORY)
    with _fake(keys[1]).running() as fake:
        code, _, stderr = _ingest(installation, project, fake)
        assert fake.app is not None and fake.app.exchanges == [] and fake.requests == 0
    assert code == 1 and "Traceback" not in stderr
    assert f"has mode 0644, open to other users; a private key must be its owner's alone: chmod 600 {key_file}" \
        in stderr
    doctor = installation.cli("doctor", "--json")
    check = {c["check"]: c for c in json.loads(doctor.stdout)["summary"]["checks"]}["github app"]
    assert check["level"] == "fail" and "chmod 600" in check["state"]
