"""The CLI's click command, built from the typer app once per test process, and `invoke`: `CliRunner.invoke` over
that one command.

typer builds the click command tree afresh on every `typer.main.get_command(app)`, and `CliRunner.invoke` calls
it on every run: about 0.5 s of CPU each time here (0.85 s loaded), as much as a `theurian` process's whole start.
The tree is built from the app's declarations alone (an option's environment variable or a help width is read when
a command runs, not when the tree is built), and click makes a new context for every run, so one tree serves
every walk and every in-process run a test makes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any
from unittest import mock

import typer.main
import typer.testing
from typer.testing import CliRunner, Result

from theurian.cli.main import app


@cache
def command() -> Any:
    """The click command `theurian` runs (a group: typer vendors click, so duck-type its `commands`)."""
    return typer.main.get_command(app)


def at(*path: str) -> Any:
    """The command `theurian PATH` names."""
    found = command()
    for name in path:
        found = found.commands[name]
    return found


def invoke(args: Sequence[str], *, env: Mapping[str, str | None] | None = None) -> Result:
    """`CliRunner().invoke(app, args, env=env, prog_name="theurian")` over the tree `command()` built once."""
    with mock.patch.object(typer.testing, "_get_command", lambda _app: command()):
        return CliRunner().invoke(app, list(args), env=env, prog_name="theurian")
