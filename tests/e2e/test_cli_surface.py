"""The CLI as a user meets it: help on every command, the version, fast start-up, commands documented."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import cli_app
from tests.support.cli_app import at, invoke
from tests.support.installation import THEURIAN_BIN, Installation
from theurian import __version__

REPO = Path(__file__).resolve().parents[2]


def _command_paths() -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = []

    def walk(command: Any, prefix: tuple[str, ...]) -> None:
        paths.append(prefix)
        for name, sub in getattr(command, "commands", {}).items():  # typer vendors click: duck-type groups
            walk(sub, (*prefix, name))

    walk(cli_app.command(), ())
    return paths


def test_the_command_walk_reaches_nested_commands() -> None:
    assert {("project", "register"), ("serve",), ("init",)} <= set(_command_paths())


def test_version_prints_the_package_version(installation: Installation) -> None:
    result = installation.cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"theurian {__version__}"


@pytest.mark.parametrize("path", _command_paths(), ids=lambda p: " ".join(p) or "theurian")
def test_every_command_has_help_text(path: tuple[str, ...]) -> None:
    assert (at(*path).help or "").strip(), f"`theurian {' '.join(path)}` has no help text"


def test_help_runs_through_the_console_script_at_the_top_and_in_a_nested_group(installation: Installation) -> None:
    """The installed script's entry (`theurian.cli.entry` around `theurian.cli.main.run`) prints help and exits 0;
    the other commands' help is the same app's, checked in-process below (one process each cost a minute)."""
    for path in ((), ("project", "register")):
        result = installation.cli(*path, "--help")
        assert result.returncode == 0, (path, result.stderr)
        assert "Usage:" in result.stdout and f"theurian {' '.join(path)}".strip() in result.stdout


def test_help_runs_for_every_command() -> None:
    for path in _command_paths():
        result = invoke([*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Usage:" in result.output and f"theurian {' '.join(path)}".strip() in result.output


def test_every_command_is_documented() -> None:
    docs = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "docs").glob("*.md"))
    for path in _command_paths():
        if path:
            assert f"theurian {' '.join(path)}" in docs, f"`theurian {' '.join(path)}` is not in docs/"


def test_the_cli_starts_without_loading_the_daemon_or_the_stores() -> None:
    probe = ("import sys, theurian.cli.main; "
             "print(sorted(m for m in ('mcp', 'uvicorn', 'duckdb', 'githubkit', 'gql', 'starlette') "
             "if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]", (
        f"`theurian` start-up imports {loaded.strip()}: import heavy libraries inside the command function "
        "that needs them, so every other command starts fast")


def test_an_unknown_command_is_a_usage_error_without_a_traceback(installation: Installation) -> None:
    result = installation.cli("frobnicate")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "No such command" in result.stderr


def test_ctrl_c_during_a_command_exits_130_not_0(installation: Installation) -> None:
    script = ("import theurian.cli.main as m\n"
              "@m.app.command('wait')\n"
              "def wait() -> None:\n"
              "    '''Stand-in for a long command the user interrupts.'''\n"
              "    raise KeyboardInterrupt\n"
              "m.run()\n")
    result = subprocess.run([sys.executable, "-c", script, "wait"], env=installation.env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 130
    assert "Traceback" not in result.stderr


def test_a_file_system_refusal_is_one_clear_line(installation: Installation, tmp_path: Path) -> None:
    installation.cli_in_process("init", str(tmp_path))
    (tmp_path / ".theurian/state").write_text("not a folder", encoding="utf-8")
    for command in (("review", "build"), ("migrate", "apply")):
        result = installation.cli(*command, "--project", str(tmp_path))
        assert result.returncode == 1, command
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "unexpected failure" not in lines[0] and ".theurian/state" in lines[0], lines


@pytest.mark.parametrize("name, shown", [("two\nlines", "two\\nlines"), ("para\u2028graph", "para\\u2028graph"),
                                         ("\x1b[31mred", "\\x1b[31mred"),
                                         # not line breaks: shown as typed, so the path can be copied
                                         ("日本語\u3000フォルダ", "日本語\u3000フォルダ"), ("tab\there", "tab\there"),
                                         ("zwj👨\u200d👩", "zwj👨\u200d👩"), ("café", "café")])
def test_an_error_naming_a_path_with_a_line_break_or_an_escape_is_still_one_plain_line(
        installation: Installation, tmp_path: Path, name: str, shown: str) -> None:
    odd = tmp_path / name
    odd.mkdir()
    result = installation.cli("review", "status", "--project", str(odd))
    assert result.returncode == 1
    assert len(result.stderr.splitlines()) == 1 and shown in result.stderr and "\x1b" not in result.stderr


@pytest.mark.parametrize("arguments", [
    ("propose", "candidate", "--repository", "Acme/\udcffidgets", "--record-key", "PRRT_x"),
    ("review", "allow", "acme/w\udcff"),
    ("propose", "list", "--project", "/tmp/not-utf8-\udcff"),
], ids=["a value", "a repository", "a path that does not exist"])
def test_an_argument_that_is_not_utf8_is_a_usage_error_naming_it(installation: Installation,
                                                                 arguments: tuple[str, ...]) -> None:
    """Before: an internal-fault line (orjson refused the value) or a cure for a store that was never at fault."""
    result = installation.cli(*arguments)
    assert result.returncode == 2
    shown = next(a for a in arguments if "\udcff" in a).replace("\udcff", "\\xff")
    assert result.stderr == (f"theurian: the argument {shown} is not UTF-8 text; every argument must be, unless it "
                             "names a file or folder that exists\n")


@pytest.mark.parametrize("arguments", [
    ("review", "search", "\udcff", "--json"),
    ("review", "allow", "--json", "acme/w\udcff"),
    ("review", "search", "--json", "--", "\udcff"),
], ids=["an argument", "an option's value", "after --"])
def test_an_argument_that_is_not_utf8_under_json_prints_the_refusal_document_too(
        installation: Installation, arguments: tuple[str, ...]) -> None:
    result = installation.cli(*arguments)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert json.loads(result.stdout) == {"command": " ".join(arguments[:2]), "ok": False, "summary": {
        "error": line.removeprefix("theurian: "), "exitCode": 2}}


@pytest.mark.parametrize("arguments", [
    ("auth", "token", "--json", "\udcff"),  # a command with no --json: click would refuse the option itself
    ("review", "search", "\udcff", "--", "--json"),  # after --, --json is an argument, not the option
    ("revi\udcff", "--json"),  # no command named
], ids=["no --json option", "--json after --", "no command"])
def test_an_argument_that_is_not_utf8_prints_no_document_where_no_command_takes_json(
        installation: Installation, arguments: tuple[str, ...]) -> None:
    result = installation.cli(*arguments)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and "is not UTF-8 text" in result.stderr


def test_an_existing_folder_whose_name_is_not_utf8_is_a_project_the_file_commands_work_in(
        installation: Installation, tmp_path: Path) -> None:
    """A file system's names are bytes: what only reads and writes under the folder works there, and the review
    store, which DuckDB cannot open through such a path, refuses in one line naming why."""
    root = tmp_path / "proj-\udcff"
    (tmp_path / "proj").mkdir()
    installation.cli_in_process("init", str(tmp_path / "proj"))  # init refuses such a name; a rename after it does not
    (tmp_path / "proj").rename(root)

    def cli(*arguments: str) -> subprocess.CompletedProcess[str]:  # its output names the path: bytes, not text
        return subprocess.run([str(THEURIAN_BIN), *arguments], env=installation.env, capture_output=True, text=True,
                              encoding="utf-8", errors="backslashreplace", timeout=120, check=False)

    status = cli("migrate", "status", "--project", str(root))
    assert status.returncode == 0, status.stderr
    build = cli("review", "build", "--project", str(root))
    assert build.returncode == 1 and "bytes that are not UTF-8, which DuckDB cannot open" in build.stderr
    assert "unexpected failure" not in build.stderr
