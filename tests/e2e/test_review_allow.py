"""`theurian review allow` re-run: a set-up step whose work is done exits 0 and says so, changing nothing; a name
that can be no GitHub repository is refused naming the one that can."""

import json
from pathlib import Path

from tests.e2e.review_ingest_support import ingest, small_corpus
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PUBLIC_REPOSITORY, load_fixture
from tests.support.installation import Installation
from theurian.cli.pasteable import with_project
from theurian.text import shell_word


def test_allowing_a_repository_already_allowed_in_any_spelling_exits_0_saying_so(installation: Installation,
                                                                                 tmp_path: Path) -> None:
    installation.cli("init", str(tmp_path), check=True)
    installation.cli("review", "allow", "Acme/Widgets", "--project", str(tmp_path), check=True)
    config = (tmp_path / ".theurian/config.toml").read_bytes()
    again = installation.cli("review", "allow", "acme/widgets", "--project", str(tmp_path))
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == ["Acme/Widgets is already on the review allowlist; nothing changed"]
    assert (tmp_path / ".theurian/config.toml").read_bytes() == config


def test_disallowing_a_repository_not_allowed_exits_0_saying_nothing_changed(installation: Installation,
                                                                             tmp_path: Path) -> None:
    installation.cli("init", str(tmp_path), check=True)
    config = (tmp_path / ".theurian/config.toml").read_bytes()
    again = installation.cli("review", "disallow", "acme/widgets", "--project", str(tmp_path))
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == ["acme/widgets is not on the review allowlist; nothing changed"]
    as_json = installation.cli("review", "disallow", "acme/widgets", "--json", "--project", str(tmp_path))
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == {
        "command": "review disallow", "ok": True, "summary": {
            "repository": "acme/widgets", "changed": False,
            "message": "acme/widgets is not on the review allowlist; nothing changed"}}
    assert (tmp_path / ".theurian/config.toml").read_bytes() == config


def test_allow_under_json_says_nothing_changed_as_its_line_does(installation: Installation, tmp_path: Path) -> None:
    installation.cli("init", str(tmp_path), check=True)
    installation.cli("review", "allow", "Acme/Widgets", "--project", str(tmp_path), check=True)
    again = installation.cli("review", "allow", "acme/widgets", "--json", "--project", str(tmp_path))
    assert again.returncode == 0 and json.loads(again.stdout)["summary"] == {
        "repository": "acme/widgets", "changed": False,
        "message": "Acme/Widgets is already on the review allowlist; nothing changed"}


def test_allowing_a_name_ending_in_dot_git_is_refused_naming_the_repository_and_stores_nothing(
        installation: Installation, tmp_path: Path) -> None:
    installation.cli("init", str(tmp_path), check=True)
    config = (tmp_path / ".theurian/config.toml").read_bytes()
    refused = installation.cli("review", "allow", "Acme/Widgets.git", "--project", str(tmp_path))
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        "theurian: Acme/Widgets.git ends in .git, the suffix of a clone URL: GitHub names that repository "
        "Acme/Widgets and answers nothing for Acme/Widgets.git, so nothing was stored; run "
        f"`theurian review allow Acme/Widgets --project {shell_word(str(tmp_path))}`"]  # as the operator named it
    assert (tmp_path / ".theurian/config.toml").read_bytes() == config
    installation.cli("review", "allow", "Acme/Widgets", "--project", str(tmp_path), check=True)


def test_an_entry_stored_ending_in_dot_git_fails_its_ingest_naming_the_commands_that_mend_it(
        installation: Installation, tmp_path: Path) -> None:
    """An allowlist written before `review allow` refused the suffix, or by hand."""
    installation.cli("init", str(tmp_path), check=True)
    stored = f"{PUBLIC_REPOSITORY}.git"
    (tmp_path / ".theurian/config.toml").write_text(f'[review]\nallowlist = ["{stored}"]\n', encoding="utf-8")
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        failed = ingest(installation, tmp_path, fake)
    assert failed.returncode == 1
    assert with_project(f"a repository is named without .git: run `theurian review disallow {stored}`, then "
                        f"`theurian review allow {PUBLIC_REPOSITORY}`", tmp_path) in failed.stderr
    mended = installation.cli("review", "disallow", stored, "--project", str(tmp_path))
    assert mended.returncode == 0, mended.stderr
    installation.cli("review", "allow", PUBLIC_REPOSITORY, "--project", str(tmp_path), check=True)
