"""An empty path on the command line is refused: `Path("")` is `.`, so an unset shell variable (`init "$DIR"`)
silently named the current folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.installation import Installation
from theurian.cli.project_option import EMPTY_PATH_REFUSAL
from theurian.errors import EXIT_USAGE

COMMANDS = {
    "init": ["init", ""],
    "project register": ["project", "register", ""],
    "--project": ["review", "status", "--project", ""],
    "review export --parquet": ["review", "export", "--parquet", ""],
    "propose migration --operations-file": ["propose", "migration", "--operations-file", "", "--author", "a",
                                            "--description", "d"],
    "propose change --body-file": ["propose", "change", "x", "--expected-revision", "r", "--body-file", "",
                                   "--author", "a"],
}


@pytest.mark.parametrize("words", COMMANDS.values(), ids=COMMANDS.keys())
def test_an_empty_path_argument_is_refused_rather_than_read_as_the_current_folder(
        installation: Installation, tmp_path: Path, words: list[str]) -> None:
    (tmp_path / "project").mkdir()
    installation.cli_in_process("init", str(tmp_path / "project"))
    before = sorted(p.name for p in (tmp_path / "project").rglob("*"))
    result = installation.cli(*words, cwd=tmp_path / "project")
    assert result.returncode == EXIT_USAGE, result.stdout + result.stderr
    assert EMPTY_PATH_REFUSAL in result.stderr and "Traceback" not in result.stderr
    assert sorted(p.name for p in (tmp_path / "project").rglob("*")) == before
