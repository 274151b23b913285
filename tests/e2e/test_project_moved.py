"""A registered project whose folder was moved (`mv proj moved`): every command that then fails names a cure that,
pasted, points the registered id at the new folder, so an agent configured with the id keeps working. They used to
say "register it again from its folder", which made a new id and left the old one registered and broken."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from serve.errors import ToolRefusal
from serve.local_call import call_locally
from serve.tooling import ServeSettings
from tests.support.installation import THEURIAN_BIN, Installation
from theurian import registry
from theurian.installation import registry_path
from theurian.project import resolve_project


@pytest.fixture
def moved(installation: Installation, tmp_path: Path) -> Path:
    """Project `proj` registered at tmp/proj, then its folder moved to tmp/moved (returned)."""
    installation.new_project(tmp_path / "proj")
    (tmp_path / "proj").rename(tmp_path / "moved")
    return tmp_path / "moved"


def _paste(installation: Installation, text: str, new_path: Path | None = None, placeholder: str = "NEW_PATH") -> None:
    """The first backticked command in `text` run by bash as pasted, `placeholder` typed as `new_path`."""
    command = re.search(r"`([^`]+)`", text)
    assert command is not None, text
    line = command.group(1) if new_path is None else command.group(1).replace(placeholder, str(new_path))
    env = installation.env | {"PATH": f"{THEURIAN_BIN.parent}:{installation.env.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (line, done.stderr)


def _registrations(installation: Installation) -> list[tuple[str, Path]]:
    with installation.in_process():
        return [(r.project_id, r.root) for r in registry.read().registrations]


@pytest.mark.parametrize("command", [("doctor", "--json"), ("project", "status", "--json")])
def test_doctor_and_project_status_name_a_cure_for_the_moved_root_that_keeps_its_id(
        installation: Installation, moved: Path, command: tuple[str, ...]) -> None:
    document = json.loads(installation.cli(*command).stdout)["summary"]
    checks = ({c["check"]: c for c in document["checks"]} if command[0] == "doctor"
              else {f"proj: {name}": c for name, c in document["projects"][0]["state"].items()})
    cure = checks["proj: root"]["cure"]
    assert cure.startswith("if the project moved, `theurian project register NEW_PATH --id proj` (it keeps the id "
                           "agents use); else restore it, or `theurian project unregister proj`"), cure
    _paste(installation, cure, moved)
    assert _registrations(installation) == [("proj", moved)]
    assert json.loads(installation.cli("project", "status", "proj", "--json").stdout)["summary"]["projects"][0][
        "state"]["root"]["level"] == "ok"


def test_an_agent_calling_with_the_old_id_is_told_the_cure_that_keeps_it(
        installation: Installation, moved: Path) -> None:
    with installation.in_process(), pytest.raises(ToolRefusal) as refused:
        call_locally("knowledge.search", {"projectId": "proj", "query": "x"}, ServeSettings("internal"))
    assert refused.value.message == (
        "project 'proj' is registered at a folder with no .theurian/ (moved or deleted?): if it moved, "
        "`theurian project register NEW_PATH --id proj` (it keeps the id agents use); if it is gone, "
        "`theurian project unregister proj`")
    _paste(installation, refused.value.message, moved)
    with installation.in_process():
        assert resolve_project("proj").root == moved.resolve()


def test_a_read_command_in_the_moved_folder_names_the_register_that_keeps_the_id(
        installation: Installation, moved: Path) -> None:
    refused = installation.cli("findings", "list", cwd=moved)
    assert refused.returncode == 1
    assert refused.stderr == (
        f"theurian: {moved} is not registered, so no agent can read it: if it is project 'proj' moved here from "
        f"{moved.parent / 'proj'}, run `theurian project register {moved} --id proj` (it keeps the id agents use); "
        f"else `theurian project register {moved}`\n")
    _paste(installation, refused.stderr)
    assert _registrations(installation) == [("proj", moved)]


def test_registering_the_moved_folder_under_a_new_id_says_how_to_keep_the_old_one_instead(
        installation: Installation, moved: Path) -> None:
    done = installation.cli("project", "register", str(moved), check=True)
    assert done.stdout.splitlines() == [
        f"registered moved -> {moved}",
        f"next: if this folder is project 'proj' moved here (it was at {moved.parent / 'proj'}), keep that id: "
        f"`theurian project unregister moved && theurian project register {moved} --id proj`; else "
        "`theurian project unregister proj`"]
    _paste(installation, done.stdout)
    assert _registrations(installation) == [("proj", moved)]
    again = installation.cli("project", "register", str(moved), "--id", "proj", "--json", check=True)
    assert json.loads(again.stdout)["summary"]["changed"] is False


def test_the_register_that_keeps_the_id_says_where_it_was_and_refuses_while_the_old_folder_is_still_a_project(
        installation: Installation, moved: Path, tmp_path: Path) -> None:
    done = installation.cli("project", "register", str(moved), "--id", "proj", "--json", check=True)
    assert json.loads(done.stdout)["summary"] == {
        "projectId": "proj", "rootPath": str(moved), "changed": True, "movedFrom": str(tmp_path / "proj"),
        "nextSteps": []}
    installation.new_project(tmp_path / "copy")  # a second project, still in place: its id is not taken over
    refused = installation.cli("project", "register", str(moved), "--id", "copy")
    assert (refused.returncode, refused.stderr) == (1, (
        f"theurian: {moved} is already registered as 'proj'; to register it as 'copy' instead, run "
        f"`theurian project unregister proj && theurian project register {moved} --id copy`\n"))
    installation.cli("project", "unregister", "proj", check=True)
    taken = installation.cli("project", "register", str(moved), "--id", "copy")
    assert taken.returncode == 1 and f"({tmp_path / 'copy'}), which still holds .theurian/" in taken.stderr
    assert _registrations(installation) == [("copy", tmp_path / "copy")]


def test_a_registration_that_names_no_root_folder_is_cured_by_the_register_that_keeps_its_id(
        installation: Installation, tmp_path: Path) -> None:
    """doctor and `project list` said "unregister it, then register it again", which keeps the id only when the
    folder's default id happens to be the same one."""
    project = tmp_path / "service"
    installation.new_project_in_process(project, "proj")  # an id that is not the folder's default (`service`)
    with installation.in_process():
        registry_path().write_text('[projects.proj]\nroot = "service"\n', encoding="utf-8")  # a hand edit: relative
    cure = "`theurian project register PATH --id proj` (it keeps the id agents use), PATH being the project's folder"
    checks = {c["check"]: c for c in json.loads(installation.cli("doctor", "--json").stdout)["summary"]["checks"]}
    row = checks["proj: registration"]
    assert (row["state"], row["cure"]) == (
        "names no root folder", f"{cure}; if it is gone, `theurian project unregister proj`")
    listed = installation.cli("project", "list", check=True).stdout
    assert listed == f"proj\t(no root path: {row['cure']})\n"
    with installation.in_process(), pytest.raises(ToolRefusal) as refused:  # an agent calling with the id
        call_locally("knowledge.search", {"projectId": "proj", "query": "x"}, ServeSettings("internal"))
    assert refused.value.message.endswith(f"names no absolute root path; {row['cure']}")
    _paste(installation, row["cure"], project, "PATH")
    assert _registrations(installation) == [("proj", project)]


def test_project_list_flags_a_registration_whose_folder_is_gone_with_the_cure_doctor_names(
        installation: Installation, moved: Path, tmp_path: Path) -> None:
    """`project list` showed a moved project's id and old folder like any other: only doctor said it was gone."""
    installation.new_project(tmp_path / "kept")
    installation.new_project(tmp_path / "emptied")
    (tmp_path / "emptied/.theurian/config.toml").unlink()
    (tmp_path / "emptied/.theurian/.gitignore").unlink()
    (tmp_path / "emptied/.theurian").rmdir()  # the folder is there; the project in it is not
    checks = {c["check"]: c for c in json.loads(installation.cli("doctor", "--json").stdout)["summary"]["checks"]}
    gone, emptied = checks["proj: root"]["cure"], checks["emptied: .theurian/"]["cure"]
    listed = installation.cli("project", "list", check=True).stdout
    assert listed.splitlines() == [
        f"emptied\t{tmp_path / 'emptied'}\t(gone: it holds no .theurian/; {emptied})",
        f"kept\t{tmp_path / 'kept'}",
        f"proj\t{tmp_path / 'proj'}\t(gone: it does not exist; {gone})"]
    document = json.loads(installation.cli("project", "list", "--json", check=True).stdout)["summary"]
    assert document["projects"] == [
        {"projectId": "emptied", "rootPath": str(tmp_path / "emptied"), "gone": True, "cure": emptied},
        {"projectId": "kept", "rootPath": str(tmp_path / "kept"), "gone": False, "cure": ""},
        {"projectId": "proj", "rootPath": str(tmp_path / "proj"), "gone": True, "cure": gone}]
    _paste(installation, listed.splitlines()[2].split("; ", 1)[1], moved)
    assert installation.cli("project", "list", check=True).stdout.splitlines()[2] == f"proj\t{moved}"
