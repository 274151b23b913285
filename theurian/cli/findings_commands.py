"""`theurian findings build`: land a project's `Review-Finding:` trailers for review.findings to serve."""

from __future__ import annotations

import typer

from projection.findings_build import build_findings_store
from serve.refusal import path_escape_refusal
from theurian.cli.project_option import ProjectOption, project_root
from theurian.errors import PathEscapeError

app = typer.Typer(help="The findings store review.findings answers from.", no_args_is_help=True)


@app.command("build")
def build(
    project: ProjectOption = None,
) -> None:
    """Rebuild the findings store from every commit reachable from HEAD, and report what was skipped.

    The new store replaces the old one atomically; malformed Review-Finding lines are counted, not stored.
    """
    root = project_root(project)
    try:
        summary = build_findings_store(root)
    except PathEscapeError as exc:
        # The daemon answers the same escape with the same words: the rebuild cannot cure it, this can.
        raise PathEscapeError(path_escape_refusal(exc.relative), relative=exc.relative, cured=True) from exc
    typer.echo(summary.describe())
