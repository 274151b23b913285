"""The `theurian` entry point: composes the command groups and turns every error into one line and an exit code."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Final

import typer
from typer._click.exceptions import ClickException  # typer vendors click; its errors are these

from theurian.cli.error_text import domain_text, escape_text, os_error_text, unexpected_text
from theurian.cli.json_summary import echo_early_refusal, echo_refusal
from theurian.cli.lazy_commands import Loader, command, group, lazy_group
from theurian.cli.pasteable import given_project, named_command, takes_option, with_project
from theurian.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_TERMINATED, EXIT_USAGE, PathEscapeError, TheurianError
from theurian.interrupts import ignored_from_here, terminated_as_interrupted, was_terminated
from theurian.text import is_utf8, one_line

# A path that exists is let through whatever its bytes (`_not_utf8`): the file system's names are bytes.
EVERY_ARGUMENT: Final = "every argument must be, unless it names a file or folder that exists"

# Every command, in the order help lists them (typer's: its commands, then its groups). A command's module is
# imported only when the command line names it (theurian.cli.lazy_commands): each command pays for its own imports.
COMMANDS: Final[dict[str, Loader]] = {
    "init": command("init_command", "init"), "serve": command("serve_command", "serve"),
    "setup": command("setup_commands", "setup"), "uninstall": command("setup_commands", "uninstall"),
    "doctor": command("doctor_command", "doctor"), "sync": command("sync_command", "sync"),
    "project": group("project_commands"),
    # The read commands live beside the tools' local calls (read_commands), each joining its group here.
    "review": group("review_commands", joined={"search": ("read_commands", "review_search")}),
    "findings": group("findings_commands", joined={"list": ("read_commands", "findings_list")}),
    "migrate": group("migrate_commands"), "index": group("index_commands"), "propose": group("propose_commands"),
    "knowledge": group("read_commands", "knowledge_app"), "daemon": group("daemon_commands"),
    "auth": group("auth_commands"),
}

app: typer.Typer = typer.Typer(
    name="theurian",
    help="Turn a team's code-review history into knowledge coding agents can search and use safely.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=lazy_group(COMMANDS, lambda: app),
)


def _show_version(value: bool) -> None:
    if value:
        from theurian import __version__  # read from the package's metadata: only --version pays for it

        typer.echo(f"theurian {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Theurian: review history in, searchable knowledge for coding agents out."""





def _not_utf8(arguments: list[str]) -> str | None:
    """The first argument that is not UTF-8 text, as Python decoded it from the command line's bytes (each byte
    that is not UTF-8 kept as a lone surrogate), shown escaped; None when every one is text.

    A path that exists is left alone, whatever its bytes (`--project DIR`, or `--project=DIR`): a file system's
    names are bytes, and every command that only reads and writes under it works there. One that stores the path as
    text refuses it itself (the registry, the review store)."""
    for argument in arguments:
        if not is_utf8(argument):
            value = argument.split("=", 1)[1] if argument.startswith("--") and "=" in argument else argument
            if not os.path.lexists(value):
                return repr(argument.encode("utf-8", "surrogateescape"))[2:-1]
    return None


def _json_command(arguments: list[str]) -> str | None:
    """The words after `theurian` naming the command `arguments` run, when it is one that takes `--json` and
    `--json` is among its options (read as click would: group names first, nothing after `--`); None otherwise,
    as for a line naming no command, which click would refuse without a document too."""
    command, names = named_command(arguments)
    rest = arguments[len(names):]
    options = rest[:rest.index("--")] if "--" in rest else rest
    return " ".join(names) if names and takes_option(command, "--json") and "--json" in options else None


def _escape_what_stdout_cannot_encode() -> None:
    """Print a character stdout's encoding cannot hold as its backslash escape instead of failing the command.

    A path that exists passes `_not_utf8` whatever its bytes, and Python keeps each byte that is not UTF-8 as a
    lone surrogate, which a strict UTF-8 stdout (Python's own in an en_US.UTF-8 locale) refuses to write: `init`
    would fail after doing its work, and a `--json` document would end in a traceback. `\\udcff` is a JSON escape
    too, so a document stays JSON (stderr already escapes, Python's default there)."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)  # absent when a caller has swapped stdout
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")


def run() -> None:
    """Console-script entry: no traceback ever reaches the user."""
    terminated_as_interrupted()
    try:
        code = _outcome()
    except KeyboardInterrupt:  # while a refusal was being printed
        code = EXIT_INTERRUPTED
    if code == EXIT_INTERRUPTED and was_terminated():
        code = EXIT_TERMINATED
    # The command has finished, one way or another: a Ctrl-C from here on could only misreport it (theurian.interrupts).
    ignored_from_here()
    sys.exit(code)


def _outcome() -> int:
    """Run the command line; its exit code, every error turned into one line on stderr first."""
    # Every value Theurian stores or sends is UTF-8 text (TOML, JSON, DuckDB, SQLite), so a value that is not
    # would fail wherever it first reached one, as an internal fault or with another problem's cure.
    _escape_what_stdout_cannot_encode()
    undecodable = _not_utf8(sys.argv[1:])
    if undecodable is not None:
        text = f"the argument {undecodable} is not UTF-8 text; {EVERY_ARGUMENT}"
        typer.echo(f"theurian: {text}", err=True)
        command = _json_command(sys.argv[1:])
        if command is not None:  # refused before click parsed the line, so before --json's own callback ran
            echo_early_refusal(command, text, EXIT_USAGE)
        return EXIT_USAGE
    try:
        # With standalone_mode off, typer turns Ctrl-C into a returned 130 rather than raising: exit with it.
        code = app(standalone_mode=False)
    except PathEscapeError as exc:
        return _refused(escape_text(exc), exc.exit_code, exc)
    except TheurianError as exc:
        return _refused(domain_text(exc), exc.exit_code, exc)
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort as exc:
        return _refused("aborted", EXIT_FAILED, exc)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except OSError as exc:  # the file system said no: say what and where, on one line
        return _refused(os_error_text(exc), EXIT_FAILED, exc)
    except ClickException as exc:  # usage errors: click's own one-paragraph message, exit 2
        exc.show()
        return exc.exit_code
    except Exception as exc:  # noqa: BLE001 - the top-level handler: one line, never a traceback
        return _refused(unexpected_text(exc), EXIT_FAILED, exc)
    return code if isinstance(code, int) else 0


def _refused(text: str, exit_code: int, error: BaseException) -> int:
    """One line on stderr and the exit code; under `--json`, the refusal's document on stdout as well."""
    # Its cure pasted where the operator stands: with the project they named, when they named one.
    line = one_line(with_project(text, given_project(sys.argv[1:])))
    typer.echo(f"theurian: {line}", err=True)
    echo_refusal(line, exit_code, error)
    return exit_code
