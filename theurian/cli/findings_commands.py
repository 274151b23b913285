"""`theurian findings build`: land a project's `Review-Finding:` trailers for review.findings to serve."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from projection.findings_build import build_findings_store
from serve.refusal import PATH_ESCAPE_REFUSAL, STATE_ESCAPE_CURE
from theurian.errors import PathEscapeError, ProjectError
from theurian.project import THEURIAN_DIR

app = typer.Typer(help="The findings store review.findings answers from.", no_args_is_help=True)


@app.command("build")
def build(
    path: Annotated[Path, typer.Argument(help="The project folder (it must hold .theurian/).")] = Path("."),
) -> None:
    """Rebuild the findings store from every commit reachable from HEAD, and report what was skipped.

    The new store replaces the old one atomically; malformed Review-Finding lines are counted, not stored.
    """
    root = path.resolve()
    if not (root / THEURIAN_DIR).is_dir():
        raise ProjectError(f"{root} holds no .theurian/; run `theurian init {path}` first")
    try:
        summary = build_findings_store(root)
    except PathEscapeError as exc:
        # The daemon answers the same escape with the same words: the rebuild cannot cure it, this can.
        raise PathEscapeError(f"{PATH_ESCAPE_REFUSAL} {STATE_ESCAPE_CURE}", relative=exc.relative) from exc
    typer.echo(summary.describe())
