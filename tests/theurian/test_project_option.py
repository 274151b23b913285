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


def test_each_project_option_that_is_no_project_is_refused_with_the_cure_that_works_for_it(
        installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project(tmp_path / "proj").resolve()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    (tmp_path / "bare").mkdir()
    refusals = {
        project / ".theurian": f"--project {project}/.theurian is a project's .theurian folder or inside one: "
                               f"pass --project {project}, the project folder that holds it",
        project / ".theurian/review": f"--project {project}/.theurian/review is a project's .theurian folder or "
                                      f"inside one: pass --project {project}, the project folder that holds it",
        tmp_path / "nonexistent": f"--project {tmp_path.resolve()}/nonexistent does not exist: name a project "
                                  "folder (one holding .theurian/)",
        tmp_path / "file": f"--project {tmp_path.resolve()}/file is not a folder: name a project folder (one "
                           "holding .theurian/)",
        tmp_path / "bare": f"{tmp_path.resolve()}/bare holds no .theurian/ (run `theurian init` there)",
    }
    (project / ".theurian/review").mkdir(exist_ok=True)
    for given, refusal in refusals.items():
        result = installation.cli("migrate", "status", "--project", str(given))
        assert (result.returncode, result.stderr.splitlines()) == (EXIT_FAILED, [f"theurian: {refusal}"]), given
    assert installation.cli("init", str(tmp_path / "bare")).returncode == 0  # the one cure that names init works
