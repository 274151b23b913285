import os
import stat
import tomllib
from pathlib import Path

import pytest

from tests.support.installation import Installation
from theurian import installation as inst
from theurian.errors import EXIT_FAILED, ConfigError


def _write_config(text: str) -> None:
    inst.installation_config_path().parent.mkdir(parents=True, exist_ok=True)
    inst.installation_config_path().write_text(text, encoding="utf-8")


def test_the_disclosure_ceiling_defaults_to_internal_when_unset() -> None:
    assert inst.disclosure_ceiling() == "internal"
    _write_config("# nothing set\n")
    assert inst.disclosure_ceiling() == "internal"


@pytest.mark.parametrize("word", inst.SENSITIVITY_LEVELS)
def test_every_sensitivity_word_is_a_valid_ceiling(word: str) -> None:
    _write_config(f'disclosure_ceiling = "{word}"\n')
    assert inst.disclosure_ceiling() == word


@pytest.mark.parametrize("text", ['disclosure_ceiling = "secret"\n', "disclosure_ceiling = 3\n", "not toml ["])
def test_an_unknown_ceiling_is_a_config_error_naming_the_file(text: str) -> None:
    _write_config(text)
    with pytest.raises(ConfigError) as refused:
        inst.disclosure_ceiling()
    assert str(inst.installation_config_path()) in refused.value.message


def test_the_build_stamp_secret_is_created_private_once_and_kept(tmp_path: Path) -> None:
    first = inst.build_stamp_secret()
    path = inst.state_dir() / inst.SECRET_NAME
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert inst.build_stamp_secret() == first and len(first) == inst.SECRET_BYTES
    assert tmp_path in path.parents  # never the real home directory


def test_init_creates_an_empty_allowlist_and_ignores_only_state(installation: Installation, tmp_path: Path) -> None:
    result = installation.cli("init", str(tmp_path))
    assert result.returncode == 0
    config = tomllib.loads((tmp_path / ".theurian/config.toml").read_text(encoding="utf-8"))
    assert config == {"review": {"allowlist": []}}
    assert (tmp_path / ".theurian/.gitignore").read_text(encoding="utf-8") == "state/\n"


def test_init_twice_changes_nothing_says_so_and_exits_0(installation: Installation, tmp_path: Path) -> None:
    installation.cli("init", str(tmp_path), check=True)
    (tmp_path / ".theurian/config.toml").write_text("# mine\n", encoding="utf-8")
    again = installation.cli("init", str(tmp_path))
    assert again.returncode == 0
    config = tmp_path / ".theurian/config.toml"
    assert again.stdout.splitlines() == [f"{config} already exists; nothing changed"]
    assert (tmp_path / ".theurian/config.toml").read_text(encoding="utf-8") == "# mine\n"


def test_init_of_a_missing_folder_or_a_file_fails_with_one_line_saying_which(installation: Installation,
                                                                              tmp_path: Path) -> None:
    result = installation.cli("init", str(tmp_path / "missing"))
    assert result.returncode == EXIT_FAILED
    assert result.stderr.strip().splitlines() == [
        f"theurian: {tmp_path / 'missing'} does not exist; create the folder first, or name an existing one"]
    (tmp_path / "file").write_text("x", encoding="utf-8")
    result = installation.cli("init", str(tmp_path / "file"))
    assert result.returncode == EXIT_FAILED
    assert result.stderr.strip().splitlines() == [f"theurian: {tmp_path / 'file'} is not a folder"]
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("inside", [".theurian", ".theurian/state", ".theurian/knowledge/deep"])
def test_init_inside_a_theurian_folder_is_refused_naming_the_project_that_holds_it(
        installation: Installation, tmp_path: Path, inside: str) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    installation.cli("init", str(project), check=True)
    (project / inside).mkdir(parents=True, exist_ok=True)
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    for where, cwd in ((str(project / inside), None), (".", project / inside)):
        result = installation.cli("init", where, cwd=cwd)
        assert result.returncode == EXIT_FAILED
        assert result.stderr.splitlines() == [
            f"theurian: {project / inside} is a project's .theurian folder or inside one, not a project folder; "
            f"run `theurian init {project}` for the project that holds it"]
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before
    assert not (project / ".theurian/.theurian").exists()


def test_init_of_a_folder_whose_name_only_starts_with_theurian_is_a_project(installation: Installation,
                                                                           tmp_path: Path) -> None:
    folder = tmp_path / ".theurian-notes"
    folder.mkdir()
    assert installation.cli("init", str(folder)).returncode == 0
    assert (folder / ".theurian/config.toml").is_file()


def test_an_unknown_installation_key_is_refused_rather_than_ignored() -> None:
    _write_config('disclosure-ceiling = "public"\n')
    expected = "unknown key 'disclosure-ceiling'; the keys are: disclosure_ceiling, embedding_model"
    with pytest.raises(ConfigError, match=expected):
        inst.disclosure_ceiling()


def test_an_installation_config_that_is_a_folder_is_a_config_error() -> None:
    inst.installation_config_path().mkdir(parents=True)
    with pytest.raises(ConfigError, match="config.toml cannot be read: not a regular file$"):
        inst.disclosure_ceiling()


def test_concurrent_first_uses_all_get_the_same_whole_secret(installation: Installation) -> None:
    import subprocess
    import sys

    probe = "from theurian.installation import build_stamp_secret as s; print(s().hex())"
    processes = [subprocess.Popen([sys.executable, "-c", probe], env=installation.env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(8)]
    outcomes = [process.communicate(timeout=60) for process in processes]
    secrets = {out.strip() for out, _ in outcomes}
    assert [err for _, err in outcomes if err] == []
    assert len(secrets) == 1 and len(bytes.fromhex(secrets.pop())) == inst.SECRET_BYTES
    leftovers = [p.name for p in (installation.home / "state").iterdir() if p.name != inst.SECRET_NAME]
    assert leftovers == []


def test_a_relative_xdg_folder_is_ignored_as_the_xdg_spec_says_so_every_folder_sees_one_installation(
        installation: Installation, tmp_path: Path) -> None:
    """A relative value was read against the current folder: each folder a command ran in had its own registry."""
    relative = {inst.HOME_OVERRIDE_ENV: "", "XDG_CONFIG_HOME": "relative-config", "XDG_STATE_HOME": "relative-state"}
    (tmp_path / "project").mkdir()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    installation.cli("init", str(tmp_path / "project"), check=True, extra_env=relative)
    installation.cli("project", "register", str(tmp_path / "project"), cwd=tmp_path / "a", check=True,
                     extra_env=relative)
    token = installation.cli("auth", "token", cwd=tmp_path / "a", check=True, extra_env=relative).stdout.strip()
    listed = installation.cli("project", "list", cwd=tmp_path / "b", check=True, extra_env=relative)
    assert listed.stdout.splitlines() == [f"project\t{tmp_path / 'project'}"]
    assert installation.cli("auth", "token", cwd=tmp_path / "b", check=True, extra_env=relative).stdout.strip() == token
    user_home = installation.home / "user-home"
    assert (user_home / ".config" / "theurian" / inst.REGISTRY_NAME).exists()
    assert (user_home / ".local" / "state" / "theurian" / "mcp-token").exists()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == []


def test_a_relative_theurian_home_is_refused_naming_the_variable(installation: Installation, tmp_path: Path) -> None:
    result = installation.cli("auth", "token", cwd=tmp_path, extra_env={inst.HOME_OVERRIDE_ENV: "some/dir"})
    assert result.returncode == EXIT_FAILED
    assert result.stderr.splitlines() == [
        "theurian: THEURIAN_HOME 'some/dir' is not an absolute path, so each folder a command runs in would have "
        "an installation of its own; set it to an absolute path (e.g. /some/dir), or unset it"]
    assert list(tmp_path.iterdir()) == []
