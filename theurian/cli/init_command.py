"""`theurian init`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.project_option import path_value
from theurian.errors import AlreadyInPlaceError
from theurian.project import init_project
from theurian.text import shell_word


def init(
    path: Annotated[Path, typer.Argument(help="The project folder (usually a git repository).",
                                         parser=path_value)] = Path("."),
    as_json: JsonSummaryOption = False,
) -> None:
    """Create .theurian/ in PATH: config.toml with an empty review allowlist, and a .gitignore for state/.

    Re-run where .theurian/config.toml exists, it changes nothing, says so and exits 0: a set-up step whose work
    is done has succeeded (a script re-running the README's lines must not stop there)."""
    root = path.resolve()
    try:
        created = init_project(root)
    except AlreadyInPlaceError as exc:
        if as_json:
            echo_summary({"projectRoot": str(root), "changed": False, "message": exc.message})
        else:
            typer.echo(exc.message)
        return
    step = _next_step(path)
    if as_json:
        echo_summary({"projectRoot": str(root), "changed": True, "created": str(created), "nextSteps": [step]})
        return
    typer.echo(f"created {created}")
    typer.echo(f"next: {step}")


def _next_step(path: Path) -> str:
    """The command that registers `path`, written so that pasted into a shell it names this folder (a space, a
    quote). `init_project` has refused a path that is not UTF-8 text, which the registry could not hold."""
    return f"theurian project register {shell_word(str(path))}"
