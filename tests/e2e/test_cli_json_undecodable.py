"""A path whose bytes are not UTF-8 (which theurian.cli.main lets through when the path exists) on a strict UTF-8
stdout, as Python makes it in an ordinary UTF-8 locale such as en_US.UTF-8: a `--json` refusal still prints one
document and no traceback; and where such a folder would become a project (`init`, `project register`), the
refusal prints, in ASCII, the rename that cures it, which works pasted."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.installation import THEURIAN_BIN, Installation
from theurian import registry


def test_a_refusal_under_json_naming_a_path_that_is_not_utf8_prints_its_document_and_no_traceback(
        installation: Installation, tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path) + b"/not-utf8-\xff"
    os.mkdir(folder)  # exists, so the command line's UTF-8 check lets it through; it holds no .theurian/
    env = installation.env | {"PYTHONIOENCODING": "utf-8:strict"}  # what en_US.UTF-8 gives Python's stdout
    done = subprocess.run([os.fsencode(THEURIAN_BIN), b"review", b"status", b"--project", folder, b"--json"],
                          env=env, capture_output=True, timeout=120)
    assert "Traceback" not in done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1
    document = json.loads(done.stdout)
    assert document["ok"] is False and "holds no .theurian/" in document["summary"]["error"]


def _run(installation: Installation, *arguments: bytes, cwd: bytes | None = None,
         check: bool = False) -> subprocess.CompletedProcess[bytes]:
    """The real CLI on a strict UTF-8 stdout (what en_US.UTF-8 gives Python's), with `theurian` on PATH for a
    pasted cure."""
    env = installation.env | {"PYTHONIOENCODING": "utf-8:strict",
                              "PATH": f"{THEURIAN_BIN.parent}:{installation.env.get('PATH', '')}"}
    return subprocess.run([os.fsencode(THEURIAN_BIN), *arguments], env=env, cwd=cwd, capture_output=True,
                          timeout=120, check=check)


def _pasted(installation: Installation, refusal: bytes) -> subprocess.CompletedProcess[bytes]:
    """The cure a refusal ends with (`...: `COMMAND``), pasted into bash."""
    cure = refusal.decode("ascii").rstrip("\n").rsplit(": `", 1)[1].removesuffix("`")
    return subprocess.run(["bash", "-c", cure], env=installation.env | {
        "PATH": f"{THEURIAN_BIN.parent}:{installation.env.get('PATH', '')}"}, capture_output=True, timeout=120)


@pytest.mark.parametrize("as_typed", ["path", "dot"])
def test_init_of_a_folder_whose_path_is_not_utf8_is_refused_making_nothing_and_its_rename_cure_works_pasted(
        installation: Installation, tmp_path: Path, as_typed: str) -> None:
    """Such a path can be neither registered (TOML) nor given a review store (DuckDB): init used to make the
    project anyway, print `created .../not-utf8-\\udcff` and a `theurian project register .` that failed when
    pasted. Now it refuses up front, in ASCII (`$'\\xff'`), with the rename that cures it."""
    folder = os.fsencode(tmp_path) + b"/not-utf8-\xff"
    os.mkdir(folder)
    arguments, cwd = ((b"init", folder), None) if as_typed == "path" else ((b"init", b"."), folder)
    done = _run(installation, *arguments, cwd=cwd)
    word = f"$'{tmp_path}/not-utf8-\\xff'"
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode("ascii") == (
        f"theurian: the path {word} is not UTF-8 text, which a project's path must be (the project registry keeps "
        "it as TOML text, and DuckDB cannot open the review store through it); rename the folder first: "
        f"`mv {word} {tmp_path}/not-utf8-_ && theurian init {tmp_path}/not-utf8-_`\n")
    assert not os.path.lexists(folder + b"/.theurian")
    as_json = _run(installation, *arguments, b"--json", cwd=cwd)
    document = json.loads(as_json.stdout.decode("ascii"))  # ASCII: no lone surrogate for a strict parser to refuse
    assert document["summary"]["error"] == done.stderr.decode("ascii").removeprefix("theurian: ").rstrip("\n")
    cured = _pasted(installation, done.stderr)
    assert cured.returncode == 0, cured.stderr
    step = cured.stdout.decode("ascii").splitlines()[-1].removeprefix("next: ")
    registered = subprocess.run(["bash", "-c", step], env=installation.env | {
        "PATH": f"{THEURIAN_BIN.parent}:{installation.env.get('PATH', '')}"}, capture_output=True, timeout=120)
    assert registered.returncode == 0, registered.stderr
    with installation.in_process():
        assert [(r.project_id, r.root) for r in registry.read().registrations] == [
            ("not-utf8", tmp_path / "not-utf8-_")]


def test_a_project_whose_path_became_not_utf8_is_refused_by_register_and_review_search_with_a_cure_that_works(
        installation: Installation, tmp_path: Path) -> None:
    """A project made before init refused such paths (or renamed since): `project register` said only "rename the
    folder", and `review search` named a `theurian project register` that register refused."""
    (tmp_path / "proj").mkdir()
    installation.cli_in_process("init", str(tmp_path / "proj"))
    folder = os.fsencode(tmp_path) + b"/caf\xff"
    os.rename(tmp_path / "proj", folder)
    os.mkdir(os.fsencode(tmp_path) + b"/caf_")  # taken: the rename must not move the project into it
    search = _run(installation, b"review", b"search", b"x", cwd=folder)
    register = _run(installation, b"project", b"register", folder, b"--id", b"kept")
    assert (search.returncode, register.returncode) == (1, 1)
    assert search.stderr.decode("ascii").endswith(
        f"rename the folder first: `mv $'{tmp_path}/caf\\xff' {tmp_path}/caf_-2 && "
        f"theurian project register {tmp_path}/caf_-2`\n")
    assert register.stderr.decode("ascii").endswith(f" && theurian project register {tmp_path}/caf_-2 --id kept`\n")
    cured = _pasted(installation, register.stderr)
    assert cured.returncode == 0, cured.stderr
    with installation.in_process():
        assert [(r.project_id, r.root) for r in registry.read().registrations] == [("kept", tmp_path / "caf_-2")]


def test_the_next_line_init_prints_for_a_path_with_a_space_registers_that_folder_when_pasted(
        installation: Installation, tmp_path: Path) -> None:
    folder = tmp_path / "my project's dir"
    folder.mkdir()
    done = installation.cli("init", str(folder), check=True)
    step = done.stdout.splitlines()[-1].removeprefix("next: ")
    assert step == f"theurian project register '{tmp_path}/my project'\"'\"'s dir'"
    env = installation.env | {"PATH": f"{THEURIAN_BIN.parent}:{installation.env.get('PATH', '')}"}
    pasted = subprocess.run(["bash", "-c", step], env=env, capture_output=True, text=True, timeout=120)
    assert pasted.returncode == 0, pasted.stderr
    with installation.in_process():
        assert [r.root for r in registry.read().registrations] == [folder.resolve()]
