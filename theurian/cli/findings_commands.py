"""`theurian findings build`: land a project's `Review-Finding:` trailers for review.findings to serve."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from projection.findings_build import BuildSummary, build_findings_store
from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.project_option import ProjectOption, project_root
from theurian.errors import PathEscapeError
from theurian.places import path_escape_refusal

app = typer.Typer(help="The findings store review.findings answers from.", no_args_is_help=True)


@app.command("build")
def build(
    project: ProjectOption = None,
    as_json: JsonSummaryOption = False,
) -> None:
    """Rebuild the findings store from every commit reachable from HEAD, and report what was skipped.

    The new store replaces the old one atomically; malformed Review-Finding lines are counted, not stored.
    """
    summary = run_findings_build(project_root(project))
    if as_json:
        echo_summary(findings_document(summary))
    else:
        typer.echo(summary.describe())


def run_findings_build(root: Path) -> BuildSummary:
    """Build the findings store of the project at `root`, an escape translated into the daemon's words for it.
    `findings build` and `sync` both run this.

    Raises:
        PathEscapeError: a cured message. GitHistoryError, ConfigError, SaltRefusedError: as
            `build_findings_store` raises them.
    """
    try:
        return build_findings_store(root)
    except PathEscapeError as exc:
        # The daemon answers the same escape with the same words: the rebuild cannot cure it, this can.
        raise PathEscapeError(path_escape_refusal(exc.relative), relative=exc.relative, cured=True) from exc


def findings_document(summary: BuildSummary) -> dict[str, Any]:
    """The summary `findings build --json` prints (and `sync --json` holds for its findings stage)."""
    return {
        "store": summary.store,
        "buildId": summary.build_id,
        "commits": summary.commits,
        "findings": summary.findings,
        "malformed": summary.malformed,
        "undatedCommits": summary.undated,
        "undatedLines": summary.undated_lines,
        "secrets": None if summary.secrets is None else summary.secrets.as_json(),
    }
