"""`theurian init`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.errors import AlreadyInPlaceError
from theurian.project import init_project


def init(
    path: Annotated[Path, typer.Argument(help="The project folder (usually a git repository).")] = Path("."),
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
    if as_json:
        echo_summary({"projectRoot": str(root), "changed": True, "created": str(created),
                      "nextSteps": [f"theurian project register {path}"]})
        return
    typer.echo(f"created {created}")
    typer.echo(f"next: theurian project register {path}")
