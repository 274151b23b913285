"""A folder whose path holds `?` or a backslash, which DuckDB misreads, is refused where it would become a project
(`init`, `project register`) with the build's reason and the rename that cures it; one registered before (or
renamed since) is doctor's and `project status`'s `root` row, never a traceback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from projection.errors import ReviewStorePathUnsupported
from tests.support.installation import THEURIAN_BIN, Installation
from theurian import registry
from theurian.project_path import DUCKDB_MISREADS
from theurian.text import shell_word


def _paste(installation: Installation, command: str) -> subprocess.CompletedProcess[str]:
    env = installation.env | {"PATH": f"{THEURIAN_BIN.parent}:{installation.env.get('PATH', '')}"}
    return subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=120)


def _cure(refusal: str) -> str:
    """The command a refusal ends with (`...: `COMMAND``)."""
    return refusal.rstrip("\n").rsplit(": `", 1)[1].removesuffix("`")


def test_the_build_and_the_refusal_where_a_project_is_made_give_one_reason() -> None:
    assert DUCKDB_MISREADS in ReviewStorePathUnsupported().message


@pytest.mark.parametrize(("name", "held", "renamed"), [("what?", "`?`", "what_"), ("back\\slash", "`\\`", "back_slash"),
                                                       ("b?th\\", "`?` and `\\`", "b_th_")])
def test_init_refuses_a_path_duckdb_misreads_making_nothing_and_its_rename_cure_works_pasted(
        installation: Installation, tmp_path: Path, name: str, held: str, renamed: str) -> None:
    """init made the project; only `review build` refused it, after an ingest had filled its lake."""
    folder = tmp_path / name
    folder.mkdir()
    done = installation.cli("init", str(folder))
    new = tmp_path / renamed
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"theurian: the path {shell_word(str(folder))} holds {held}, {DUCKDB_MISREADS}; rename "
                           f"the folder first: `mv {shell_word(str(folder))} {new} && theurian init {new}`\n")
    assert not (folder / ".theurian").exists()
    as_json = json.loads(installation.cli("init", str(folder), "--json").stdout)["summary"]
    assert as_json["error"] == done.stderr.removeprefix("theurian: ").rstrip("\n")
    cured = _paste(installation, _cure(done.stderr))
    assert cured.returncode == 0, cured.stderr
    assert (new / ".theurian/config.toml").is_file() and not folder.exists()


def test_register_refuses_a_project_renamed_to_such_a_path_and_its_cure_keeps_the_id(
        installation: Installation, tmp_path: Path) -> None:
    made = installation.new_project(tmp_path / "made")
    folder = tmp_path / "made?"
    made.rename(folder)
    done = installation.cli("project", "register", str(folder), "--id", "kept")
    assert done.returncode == 1
    assert done.stderr == (f"theurian: the path {shell_word(str(folder))} holds `?`, {DUCKDB_MISREADS}; rename the "
                           f"folder first: `mv {shell_word(str(folder))} {tmp_path / 'made_'} && theurian project "
                           f"register {tmp_path / 'made_'} --id kept`\n")
    with installation.in_process():
        assert [r.project_id for r in registry.read().registrations] == ["made"]  # nothing registered
    assert _paste(installation, _cure(done.stderr)).returncode == 0
    with installation.in_process():
        assert {(r.project_id, r.root) for r in registry.read().registrations} == {
            ("made", tmp_path / "made"), ("kept", tmp_path / "made_")}


def test_a_project_registered_at_such_a_path_fails_the_root_row_of_doctor_and_project_status_with_its_cure(
        installation: Installation, tmp_path: Path) -> None:
    """A project registered before init and register refused such paths: doctor's review store row said to remove
    the store and build again, which the build refuses."""
    made = installation.new_project(tmp_path / "proj")
    folder = tmp_path / "pro\\j"
    made.rename(folder)
    with installation.in_process():
        registry.register(folder, "proj")  # the registration as it stood before register refused such a path
    result = installation.cli("doctor", "--json")
    assert result.returncode == 1 and result.stderr == ""
    checks = {c["check"]: c for c in json.loads(result.stdout)["summary"]["checks"]}
    new = tmp_path / "pro_j"
    cure = f"`mv {shell_word(str(folder))} {new} && theurian project register {new} --id proj`"
    assert checks["proj: root"] == {"check": "proj: root", "level": "fail", "cure": cure,
                                    "state": f"{shell_word(str(folder))} holds `\\`, {DUCKDB_MISREADS}"}
    assert not any(name.startswith("proj: ") and name != "proj: root" for name in checks)  # the rename comes first
    status = installation.cli("project", "status", "proj")
    assert status.returncode == 0 and status.stderr == ""
    assert f"  root: {shell_word(str(folder))} holds `\\`, {DUCKDB_MISREADS}  [fail] -> {cure}" in status.stdout
    assert _paste(installation, cure.strip("`")).returncode == 0
    document = json.loads(installation.cli("project", "status", "proj", "--json").stdout)["summary"]["projects"][0]
    assert document["root"] == str(new) and document["state"]["root"]["level"] == "ok"
