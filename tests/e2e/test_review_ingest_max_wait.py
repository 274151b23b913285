"""`review ingest --max-wait` (and `sync --max-wait`, which hands it to the ingest) takes a number of seconds from
0 to a day: a negative, `nan` or infinite wait (under which "a longer one stops the run" would mean nothing) is a
usage refusal, exit 2, before anything is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.retry import LONGEST_MAX_WAIT_SECONDS
from tests.e2e.review_ingest_support import ingest_env, new_project, record_files, small_corpus
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PUBLIC_REPOSITORY, load_fixture
from tests.support.installation import Installation


def test_a_wait_at_either_bound_runs_the_ingest(installation: Installation, tmp_path: Path) -> None:
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        for bound in ("0", repr(LONGEST_MAX_WAIT_SECONDS)):
            project = new_project(installation, tmp_path / bound, PUBLIC_REPOSITORY)
            result = installation.cli("review", "ingest", "--max-wait", bound, "--project", str(project),
                                      extra_env=ingest_env(fake))
            assert result.returncode == 0, result.stderr
            assert record_files(project)


@pytest.mark.parametrize("wait", ["-5", "-0.001", "nan", "inf", "-inf", repr(LONGEST_MAX_WAIT_SECONDS + 0.001),
                                  "86401"])
@pytest.mark.parametrize("command", [("review", "ingest"), ("sync",)])
def test_a_wait_past_a_bound_or_not_a_number_is_a_usage_refusal(installation: Installation, tmp_path: Path,
                                                                 wait: str, command: tuple[str, ...]) -> None:
    project = new_project(installation, tmp_path / "p", PUBLIC_REPOSITORY)
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        result = installation.cli(*command, "--max-wait", wait, "--project", str(project),
                                  extra_env=ingest_env(fake))
        assert (result.returncode, fake.requests) == (2, 0)
    assert "Invalid value for '--max-wait'" in result.stderr and "Traceback" not in result.stderr
    assert not (project / ".theurian/review").exists()
