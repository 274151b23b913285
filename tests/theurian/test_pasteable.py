"""`theurian.cli.pasteable`: which commands in a text get `--project ROOT`, read from the CLI's own command tree."""

from __future__ import annotations

from pathlib import Path

from theurian.cli.pasteable import given_project, named_command, takes_option, with_project

ROOT = Path("/srv/my project")
WHERE = "--project '/srv/my project'"


def test_with_project_adds_the_project_as_one_shell_word_to_a_command_that_takes_it() -> None:
    assert (with_project("run `theurian review build`, then `theurian review ingest --full octo/a`", ROOT)
            == f"run `theurian review build {WHERE}`, then `theurian review ingest --full octo/a {WHERE}`")


def test_with_project_leaves_a_command_already_naming_a_project() -> None:
    for text in ("`theurian review build --project /elsewhere`", "`theurian review build --project=/elsewhere`"):
        assert with_project(text, ROOT) == text


def test_with_project_leaves_commands_that_take_no_project_groups_and_plain_words() -> None:
    text = ("`theurian daemon start`; `theurian propose change|migration|candidate`; `theurian project register "
            "/x`; `theurian`; theurian review build; `rm -r .theurian/state`")
    assert with_project(text, ROOT) == text


def test_with_project_judges_each_command_of_a_chain() -> None:
    assert (with_project("`theurian project unregister a && theurian review build`", ROOT)
            == f"`theurian project unregister a && theurian review build {WHERE}`")


def test_with_project_leaves_the_text_of_an_operator_who_named_no_project() -> None:
    assert with_project("`theurian review build`", None) == "`theurian review build`"


def test_given_project_reads_the_option_as_click_does(tmp_path: Path) -> None:
    assert given_project(["review", "build", "--project", str(tmp_path)]) == tmp_path.resolve()
    assert given_project(["review", "build", f"--project={tmp_path}"]) == tmp_path.resolve()
    assert given_project(["review", "build", "--project", "/a", "--project", str(tmp_path)]) == tmp_path.resolve()
    assert given_project(["review", "search", "--", "--project", "/a"]) is None
    assert given_project(["review", "build", "--project"]) is None
    assert given_project(["doctor"]) is None


def test_named_command_reads_group_names_first_and_takes_option_reads_its_parameters() -> None:
    command, names = named_command(["review", "build", "--full"])
    assert names == ["review", "build"]
    assert takes_option(command, "--project") and takes_option(command, "--json")
    group, names = named_command(["review", "nonsense"])
    assert names == ["review"] and not takes_option(group, "--project")
    daemon_start, _ = named_command(["daemon", "start"])
    assert not takes_option(daemon_start, "--project")
