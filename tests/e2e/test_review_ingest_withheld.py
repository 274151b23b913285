"""docs/secrets.md's promise through the real CLI and the loopback fake: a pull request `secrets = "block"` kept
out is fetched again by the next plain ingest (by number, beside its window), so unblocking is a config change and
an ingest; one still blocked stays withheld and listed; a run killed while it asks for them keeps the list; and
`review status` says how many are withheld and why, never a value."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest

from evidence.lake import Lake
from evidence.lake_read import iter_records
from ingest.queries import BY_NUMBER_OPERATION
from tests.e2e.review_ingest_support import (
    FIRST_PLANTED,
    HIDDEN_PR,
    KINDS,
    assert_no_needle,
    configure,
    copy_project,
    everything_under,
    ingest,
    ingest_env,
    planted_small_corpus,
    salted_template,
)
from tests.support.fake_github import FakeGitHub
from tests.support.installation import THEURIAN_BIN, Installation
from tests.support.planted_secrets import PLANTED

# The planted pull requests, and the hidden-character one whose thread splits a token: all withheld under block.
WITHHELD = list(range(FIRST_PLANTED, HIDDEN_PR + 1))
SMALL_CORPUS_PULLS = 6
HANG_SECONDS = 120  # the longest the fake holds a by-number request for a test to kill its client


class ByNumberFake(FakeGitHub):
    """Logs the numbers each by-number request asks for; with `hold`, holds that request until released."""

    def __init__(self, corpus: dict[str, Any], *, hold: bool = False) -> None:
        super().__init__(corpus)
        self.by_number: list[list[int]] = []
        self.hold = hold
        self.asked = threading.Event()
        self.release = threading.Event()

    def answer(self, query: str, v: dict[str, Any]) -> tuple[dict[str, Any], int]:
        if f"query {BY_NUMBER_OPERATION}" in query:
            self.by_number.append(sorted(value for key, value in v.items() if key.startswith("number")))
            self.asked.set()
            if self.hold:
                self.release.wait(HANG_SECONDS)
        return super().answer(query, v)


@pytest.fixture(scope="module")
def corpus() -> dict[str, Any]:
    return planted_small_corpus()


@pytest.fixture(scope="module")
def template(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return salted_template(module_installation, tmp_path_factory)


@pytest.fixture
def blocked(template: Path, module_installation: Installation, tmp_path: Path,
            corpus: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    """A copy of the template ingested once under block (plain summary checked); the project and its run."""
    project = copy_project(template, tmp_path / "p")
    configure(project, secrets="block")
    with FakeGitHub(corpus).running() as fake:
        result = ingest(module_installation, project, fake)
    assert result.returncode == 0, result.stderr
    assert f'{len(WITHHELD)} pull requests withheld by secrets = "block" (#{FIRST_PLANTED}, ' in result.stdout
    (run,) = Lake(project).manifests()
    assert [e["number"] for e in run["withheld"]] == WITHHELD
    return project, run


def set_policy(project: Path, secrets: str) -> None:
    config = project / ".theurian/config.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace('secrets = "block"', f'secrets = "{secrets}"'), encoding="utf-8")


def status(installation: Installation, project: Path) -> tuple[dict[str, Any], str]:
    """`review status --json`'s row of the repository, and the plain status's text."""
    as_json = installation.cli("review", "status", "--json", "--project", str(project), check=True)
    text = installation.cli("review", "status", "--project", str(project), check=True).stdout
    (row,) = [r for r in orjson.loads(as_json.stdout)["summary"]["repositories"] if r["repository"]]
    assert_no_needle(as_json.stdout + text, "review status")
    return row, text


def blocked_keys(run: dict[str, Any]) -> set[tuple[str, str]]:
    return {(r["kind"], r["recordKey"]) for r in run["secrets"]["records"] if r["action"] == "blocked"}


def stored_keys(project: Path) -> set[tuple[str, str]]:
    return {(e.record["kind"], e.record["recordKey"]) for e in iter_records(project) if e.record}


def test_once_unblocked_the_next_plain_ingest_fetches_the_withheld_by_number_and_stores_them(
    blocked: tuple[Path, dict[str, Any]], module_installation: Installation, corpus: dict[str, Any]
) -> None:
    project, first = blocked
    row, text = status(module_installation, project)
    assert [e["number"] for e in row["withheld"]] == WITHHELD
    assert row["records"]["pull-request"] == SMALL_CORPUS_PULLS + 1  # the hidden one's record held no secret
    assert f'{len(WITHHELD)} pull requests withheld by secrets = "block"' in text
    assert "the next ingest fetches them again" in text
    set_policy(project, "warn")
    fake = ByNumberFake(corpus)
    with fake.running():
        result = ingest(module_installation, project, fake, "--json")
    assert result.returncode == 0, result.stderr
    (run,) = orjson.loads(result.stdout)["summary"]["runs"]
    assert fake.by_number == [WITHHELD]  # one request, beside a window that read none of them
    assert run["pullRequests"] == len(WITHHELD)  # nothing else is read again
    assert run["withheld"] == []
    assert blocked_keys(first) <= stored_keys(project)
    row, text = status(module_installation, project)
    assert row["withheld"] == [] and "withheld" not in text
    assert row["records"]["pull-request"] == SMALL_CORPUS_PULLS + len(WITHHELD)
    fake = ByNumberFake(corpus)
    with fake.running():
        assert ingest(module_installation, project, fake).returncode == 0
    assert fake.by_number == []  # stored: no longer asked for


def test_a_pull_request_still_blocked_stays_withheld_and_listed_and_is_asked_for_again(
    blocked: tuple[Path, dict[str, Any]], module_installation: Installation, corpus: dict[str, Any]
) -> None:
    project, first = blocked
    released = first["withheld"][0]
    configure(project, acknowledged_secrets=[f["fingerprint"] for f in released["findings"]])
    fake = ByNumberFake(corpus)
    with fake.running():
        result = ingest(module_installation, project, fake, "--json")
    assert result.returncode == 0, result.stderr
    (run,) = orjson.loads(result.stdout)["summary"]["runs"]
    assert fake.by_number == [WITHHELD]
    assert [e["number"] for e in run["withheld"]] == WITHHELD[1:]
    assert {e["firstRun"] for e in run["withheld"]} == {first["runId"]}
    still = blocked_keys(run)
    assert still and still & stored_keys(project) == set()
    assert blocked_keys(first) - still <= stored_keys(project)  # the acknowledged one is stored whole
    # The acknowledged token is stored as fetched, by the operator's word; no other planted value is anywhere.
    lake_text = everything_under(project).decode("utf-8", "replace")
    assert PLANTED[KINDS[0]] in lake_text
    assert [kind for kind in KINDS[1:] if PLANTED[kind].splitlines()[-1] in lake_text] == []
    row, text = status(module_installation, project)
    assert [e["number"] for e in row["withheld"]] == WITHHELD[1:]
    assert f'{len(WITHHELD) - 1} pull requests withheld by secrets = "block" (#{WITHHELD[1]}, ' in text


def test_an_ingest_killed_while_it_asks_for_the_withheld_leaves_them_listed_for_the_next_run(
    blocked: tuple[Path, dict[str, Any]], module_installation: Installation, corpus: dict[str, Any]
) -> None:
    project, _ = blocked
    set_policy(project, "warn")
    fake = ByNumberFake(corpus, hold=True)
    args = [str(THEURIAN_BIN), "review", "ingest", "--max-wait", "0", "--project", str(project)]
    with fake.running():
        process = subprocess.Popen(args, env=module_installation.env | ingest_env(fake),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert fake.asked.wait(HANG_SECONDS), "the ingest never asked for the withheld pull requests"
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        finally:
            fake.release.set()
    killed = Lake(project).manifests()[-1]
    assert killed["status"] == "running"
    assert [e["number"] for e in killed["withheld"]] == WITHHELD
    row, text = status(module_installation, project)
    assert row["lastRun"]["interrupted"] is True
    assert [e["number"] for e in row["withheld"]] == WITHHELD and "withheld" in text
    fake = ByNumberFake(corpus)
    with fake.running():
        result = ingest(module_installation, project, fake, "--json")
    assert result.returncode == 0, result.stderr
    (run,) = orjson.loads(result.stdout)["summary"]["runs"]
    assert fake.by_number == [WITHHELD] and run["withheld"] == []
    assert status(module_installation, project)[0]["records"]["pull-request"] == SMALL_CORPUS_PULLS + len(WITHHELD)
