from pathlib import Path

import pytest

from tests.support.installation import Installation
from theurian.cli.project_option import project_root
from theurian.errors import EXIT_FAILED, ProjectError


def test_the_nearest_project_upward_is_found_from_a_subfolder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".theurian").mkdir()
    (tmp_path / "src/deep").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "src/deep")
    assert project_root(None) == tmp_path.resolve()


def test_an_explicit_project_without_theurian_dir_is_refused_naming_init(tmp_path: Path) -> None:
    with pytest.raises(ProjectError) as refused:
        project_root(tmp_path)
    assert "theurian init" in refused.value.message


@pytest.mark.parametrize("command", [("migrate", "apply"), ("migrate", "status"), ("index", "build"),
                                     ("findings", "build")])
def test_project_commands_outside_any_project_fail_in_one_line(
    installation: Installation, tmp_path: Path, command: tuple[str, str]
) -> None:
    result = installation.cli(*command, cwd=tmp_path)
    assert result.returncode == EXIT_FAILED
    assert result.stderr.strip().splitlines() == [
        f"theurian: no .theurian/ in {tmp_path.resolve()} or above: run `theurian init` or pass --project PATH"]
