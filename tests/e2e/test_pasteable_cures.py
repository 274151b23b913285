"""The commands the CLI names as cures, pasted by an operator who ran it with `--project ROOT` from another folder:
each carries `--project ROOT` (`theurian.cli.pasteable`), so pasted there it acts on that project. Every run is the
console script's, from a folder outside the project, on a project whose path a shell must have quoted."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.support.installation import Installation
from theurian.text import shell_word

_SPAN = re.compile(r"`(theurian [^`]*)`")


@pytest.fixture
def root(installation: Installation, tmp_path: Path) -> Path:
    """A registered project, empty and allowing nothing, at a path holding a space."""
    return installation.new_project_in_process(tmp_path / "my project", "spaced")


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def _commands(text: str) -> list[str]:
    return _SPAN.findall(text)


def test_a_refusal_printed_for_a_named_project_names_its_cure_with_that_project(
        installation: Installation, root: Path, elsewhere: Path) -> None:
    refused = installation.cli("findings", "list", "--project", str(root), cwd=elsewhere)
    assert refused.returncode == 1
    assert _commands(refused.stderr) == [f"theurian findings build --project {shell_word(str(root))}"]


def test_a_cure_a_command_prints_for_a_named_project_works_pasted_where_the_operator_stands(
        installation: Installation, root: Path, elsewhere: Path) -> None:
    status = installation.cli("review", "status", "--project", str(root), cwd=elsewhere, check=True)
    [cure] = _commands(status.stdout)
    assert cure == f"theurian review allow OWNER/NAME --project {shell_word(str(root))}"
    pasted = shlex.split(cure.replace("OWNER/NAME", "octo/widgets"))
    installation.cli(*pasted[1:], cwd=elsewhere, check=True)
    assert "octo/widgets" in (root / ".theurian" / "config.toml").read_text(encoding="utf-8")


def test_sync_names_each_stage_cure_with_the_named_project(
        installation: Installation, root: Path, elsewhere: Path) -> None:
    synced = installation.cli("sync", "--project", str(root), cwd=elsewhere, check=True)
    assert _commands(synced.stdout) == [f"theurian review allow OWNER/NAME --project {shell_word(str(root))}"]


def test_doctor_names_every_project_cure_with_its_project(
        installation: Installation, root: Path, elsewhere: Path) -> None:
    (root / ".theurian" / "config.toml").write_text('[review]\nallowlist = ["octo/widgets"]\n', encoding="utf-8")
    doctor = installation.cli("doctor", cwd=elsewhere)
    [lake] = [line for line in doctor.stdout.splitlines() if "spaced: evidence lake" in line]
    assert _commands(lake) == [f"theurian review ingest --project {shell_word(str(root))}"]
    # An installation's cure names no project: `theurian daemon start` takes none.
    [daemon] = [line for line in doctor.stdout.splitlines() if line.split()[1:2] == ["daemon"]]
    assert "`theurian daemon start`" in daemon


def test_a_cure_is_bare_for_an_operator_standing_in_the_project(installation: Installation, root: Path) -> None:
    status = installation.cli("review", "status", cwd=root, check=True)
    assert _commands(status.stdout) == ["theurian review allow OWNER/NAME"]
