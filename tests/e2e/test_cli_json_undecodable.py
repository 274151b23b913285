"""A path whose bytes are not UTF-8 (which theurian.cli.main lets through when the path exists) on a strict UTF-8
stdout, as Python makes it in an ordinary UTF-8 locale such as en_US.UTF-8: a `--json` refusal still prints one
document and no traceback, and a command that names the path in its output still succeeds."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

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


def test_init_of_a_folder_whose_name_is_not_utf8_succeeds_on_a_strict_stdout_and_prints_the_name_escaped(
        installation: Installation, tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path) + b"/not-utf8-\xff"
    os.mkdir(folder)
    env = installation.env | {"PYTHONIOENCODING": "utf-8:strict"}
    done = subprocess.run([os.fsencode(THEURIAN_BIN), b"init", folder], env=env, capture_output=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, b"")
    assert b"not-utf8-\\udcff" in done.stdout and os.path.isdir(folder + b"/.theurian")



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


def test_the_next_line_init_prints_for_a_folder_whose_path_is_not_utf8_names_it_pasteably_and_the_move_first(
        installation: Installation, tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path) + b"/not-utf8-\xff"
    os.mkdir(folder)
    done = subprocess.run([os.fsencode(THEURIAN_BIN), b"init", folder], env=installation.env, capture_output=True,
                          timeout=120, check=True)
    word = f"$'{tmp_path}/not-utf8-\\xff'"
    step = done.stdout.decode("ascii").splitlines()[-1].removeprefix("next: ")
    assert step == (f"move {word} to a path that is UTF-8 text (the registry cannot hold this one), then "
                    "theurian project register NEW_PATH")
    named = subprocess.run(["bash", "-c", f"printf %s {word}"], capture_output=True, timeout=30, check=True)
    assert named.stdout == folder  # pasted, the word names this folder, not one spelt `\udcff`
    os.mkdir(folder + b"2")
    as_json = subprocess.run([os.fsencode(THEURIAN_BIN), b"init", folder + b"2", b"--json"],
                             env=installation.env, capture_output=True, timeout=120, check=True)
    assert json.loads(as_json.stdout)["summary"]["nextSteps"] == [step.replace(word, word[:-1] + "2'")]
