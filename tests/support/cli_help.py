"""A command's `--help` as one line of words, rendered in-process at a width no help line wraps at."""

from __future__ import annotations

from unittest import mock

import typer.rich_utils

from tests.support.cli_app import invoke

HELP_WIDTH = 400


def help_words(*path: str) -> str:
    """`theurian PATH --help`, its whitespace folded to single spaces.

    typer reads TERMINAL_WIDTH once, when `typer.rich_utils` is first imported, so an `env=` handed to one
    invocation sets the width only if no earlier test in the process imported it: the width is set where typer
    reads it instead, or a line wrapped at 80 columns splits the words a test looks for with box characters.
    """
    with mock.patch.object(typer.rich_utils, "MAX_WIDTH", HELP_WIDTH):
        result = invoke([*path, "--help"])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())
