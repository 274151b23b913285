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


OUTSIDE = "is outside 0 to 86400 seconds (a day)"
NOT_A_NUMBER = "is not a number"


@pytest.mark.parametrize(("wait", "said"), [
    ("-5", OUTSIDE), ("-0.001", OUTSIDE), ("nan", NOT_A_NUMBER), ("NaN", NOT_A_NUMBER), ("inf", OUTSIDE),
    ("-inf", OUTSIDE), (repr(LONGEST_MAX_WAIT_SECONDS + 0.001), OUTSIDE), ("86401", OUTSIDE),
    ("soon", NOT_A_NUMBER)])
@pytest.mark.parametrize("command", [("review", "ingest"), ("sync",)])
def test_a_wait_past_a_bound_or_not_a_number_is_a_usage_refusal_saying_which(
        installation: Installation, tmp_path: Path, wait: str, said: str, command: tuple[str, ...]) -> None:
    project = new_project(installation, tmp_path / "p", PUBLIC_REPOSITORY)
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        result = installation.cli(*command, "--max-wait", wait, "--project", str(project),
                                  extra_env=ingest_env(fake))
        assert (result.returncode, fake.requests) == (2, 0)
    shown = " ".join(result.stderr.replace("│", " ").split())  # click's box, unwrapped
    assert "Invalid value for '--max-wait': " in shown and "Traceback" not in result.stderr
    assert said in shown and "less than or equal" not in shown, shown
    assert not (project / ".theurian/review").exists()
