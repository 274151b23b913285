"""Reliability: SIGKILL the real ingest at random points, and run it against a fake that injects faults."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from evidence.lake import Lake
from evidence.lake_read import iter_records
from evidence.validation import validate_manifest
from tests.e2e.review_ingest_support import copy_project, ingest, ingest_env, new_project, record_files
from tests.support.fake_github import FakeGitHub
from tests.support.installation import THEURIAN_BIN, Installation
from theurian.cli.pasteable import with_project

DEFAULT_KILLS = 3
SLOW_KILLS = 25


@dataclass(frozen=True)
class Reference:
    """An uninterrupted, fault-free ingest of the small corpus: the lake every other run must converge to."""

    template: Path
    files: dict[str, bytes]
    seconds: float


@pytest.fixture(scope="module")
def reference(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory,
              corpus: dict[str, Any]) -> Reference:
    """Made once per module; `template` is the same project before any ingest, for the runs under test."""
    root = tmp_path_factory.mktemp("reference")
    template = new_project(module_installation, root / "template", "Acme/Widgets")
    project = copy_project(template, root / "reference")
    with FakeGitHub(corpus).running() as clean:
        started = time.monotonic()
        assert ingest(module_installation, project, clean).returncode == 0
        seconds = time.monotonic() - started
    return Reference(template, record_files(project), seconds)


def assert_lake_readable(project: Path) -> None:
    assert [e.error for e in iter_records(project) if e.error] == []
    for path in (project / ".theurian" / "review").glob("runs/*.json"):
        validate_manifest(orjson.loads(path.read_bytes()))


def kill_and_converge(installation: Installation, fake: FakeGitHub, reference: Reference, tmp_path: Path,
                      kills: int) -> None:
    # Kill points spread over one uninterrupted run's duration (a timing, not an assertion).
    duration = reference.seconds
    victim = copy_project(reference.template, tmp_path / "victim")
    rng = random.Random(20261130)
    args = [str(THEURIAN_BIN), "review", "ingest", "--max-wait", "0", "--project", str(victim)]
    for _ in range(kills):
        process = subprocess.Popen(args, env=installation.env | ingest_env(fake),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            process.wait(timeout=rng.uniform(0.2, duration))
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        assert_lake_readable(victim)
    assert ingest(installation, victim, fake).returncode == 0
    assert_lake_readable(victim)
    assert record_files(victim) == reference.files
    leftovers = [p for p in (victim / ".theurian" / "review").rglob("*.tmp")]
    assert leftovers == []


def test_sigkill_at_random_points_leaves_a_valid_lake_that_a_rerun_converges(
        installation: Installation, fake: FakeGitHub, reference: Reference, tmp_path: Path) -> None:
    kill_and_converge(installation, fake, reference, tmp_path, DEFAULT_KILLS)


@pytest.mark.slow
def test_many_sigkills_at_random_points_still_converge_byte_for_byte(
        installation: Installation, fake: FakeGitHub, reference: Reference, tmp_path: Path) -> None:
    kill_and_converge(installation, fake, reference, tmp_path, SLOW_KILLS)


def test_502s_secondary_rate_limits_and_rate_limited_answers_yield_the_same_lake(
        installation: Installation, corpus: dict[str, Any], reference: Reference, tmp_path: Path) -> None:
    with FakeGitHub(corpus).running() as faulty:
        faulty.fault_plan, faulty.fault_every = ["502", "secondary", "rate_limited"], 2
        project = copy_project(reference.template, tmp_path / "faulty")
        result = ingest(installation, project, faulty, "--json")
        assert result.returncode == 0, result.stderr
        assert faulty.faults_served >= 3
        (run,) = orjson.loads(result.stdout)["summary"]["runs"]
        assert run["retries"] == faulty.faults_served
    assert record_files(project) == reference.files


def test_a_second_ingest_of_a_project_while_one_runs_is_refused_before_any_request(
        module_installation: Installation, reference: Reference, tmp_path: Path, corpus: dict[str, Any]) -> None:
    """Before, the second swept the first one's staged temp files as leftovers, and one of them failed midway."""
    project = copy_project(reference.template, tmp_path / "p")
    with FakeGitHub(corpus).running() as fake, Lake(project).writing():  # the running ingest, as far as the lake knows
        second = ingest(module_installation, project, fake)
        assert fake.requests == 0
    assert second.returncode == 1
    assert with_project("another `theurian review ingest` is writing .theurian/review of this project",
                        project) in second.stderr
    assert record_files(project) == {}
    with FakeGitHub(corpus).running() as fake:  # once the first has ended, the lake is free again
        assert ingest(module_installation, project, fake).returncode == 0
    assert record_files(project) == reference.files
