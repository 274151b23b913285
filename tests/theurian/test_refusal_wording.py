"""Refusals read as sentences: an id quoted once (`text.quoted`), a file system's bare words given their place."""

from __future__ import annotations

from pathlib import Path

import pytest

from serve.errors import ToolRefusal
from serve.local_call import call_locally
from serve.tooling import ServeSettings
from tests.knowledge.proposal_support import new_shop
from tests.support.installation import Installation
from theurian.cli.pasteable import with_project
from theurian.errors import EXIT_FAILED
from theurian.installation import registry_path


def test_rejecting_an_id_no_proposal_has_names_it_quoted(installation: Installation, tmp_path: Path) -> None:
    """It said "there is no proposal that id under .theurian/proposals/"."""
    shop = new_shop(tmp_path / "shop")
    result = installation.cli("propose", "reject", "nope", "--project", str(shop.root))
    assert result.returncode == EXIT_FAILED
    assert result.stderr.splitlines() == [with_project(  # its cure names the project the operator named
        "theurian: there is no proposal 'nope' under .theurian/proposals/ (`theurian propose list`)", shop.root)]


def test_init_where_theurian_is_a_file_says_so_and_what_to_do(installation: Installation, tmp_path: Path) -> None:
    """It printed the file system's bare "File exists: DIR/.theurian"."""
    (tmp_path / ".theurian").write_text("mine\n", encoding="utf-8")
    result = installation.cli("init", str(tmp_path))
    assert result.returncode == EXIT_FAILED
    assert result.stderr.splitlines() == [
        f"theurian: {tmp_path / '.theurian'} exists and is not a folder: move it aside, then run "
        f"`theurian init {tmp_path}` again"]
    assert (tmp_path / ".theurian").read_text(encoding="utf-8") == "mine\n"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_init_in_a_folder_that_takes_no_new_folder_says_the_folder_exists(installation: Installation) -> None:
    """It printed "No such file or directory: /proc/.theurian" of a folder that exists."""
    result = installation.cli("init", "/proc")
    assert result.returncode == EXIT_FAILED
    assert result.stderr.splitlines() == [
        "theurian: cannot create /proc/.theurian: the file system answered 'No such file or directory', though /proc "
        "exists (a virtual file system such as /proc takes no new folder); run init in a project folder on disk"]


def test_a_registration_naming_no_root_is_refused_with_its_id_quoted_once(installation: Installation) -> None:
    """It read `project 'num''s registry entry names no absolute root path`."""
    with installation.in_process():
        registry_path().parent.mkdir(parents=True)
        registry_path().write_text("[projects.num]\n", encoding="utf-8")
        with pytest.raises(ToolRefusal) as refused:
            call_locally("knowledge.search", {"projectId": "num", "query": "x"}, ServeSettings("internal"))
    assert refused.value.message.startswith("project 'num': its registry entry names no absolute root path; ")
