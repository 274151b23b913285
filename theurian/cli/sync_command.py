"""`theurian sync`: the whole refresh of one project, in order, with one summary at the end.

Ingest every allowlisted repository, build the review store, build the findings store, apply the knowledge
migrations, build the retrieval index: each stage is the function its own command runs (`theurian/cli/sync_stages.py`),
so `sync` never differs from running the five commands by hand. A stage with nothing to do is skipped and says why;
a failed stage is reported, the stages after it still run (they read sources the failure did not touch), and the
exit code is 1.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from ingest.api_url import api_url_from
from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.max_wait import MAX_WAIT_HELP, wait_seconds
from theurian.cli.pasteable import named_root, with_project
from theurian.cli.project_option import ProjectOption, project_root
from theurian.cli.sync_stages import STAGES, StageOutcome, SyncOptions, run_stage
from theurian.errors import EXIT_FAILED, TheurianError
from theurian.installation import disclosure_ceiling

_NAME_WIDTH = max(len(name) for name in STAGES)
_OUTCOME_WIDTH = len("skipped")


def sync(
    project: ProjectOption = None,
    api_url: Annotated[str | None, typer.Option(
        help="GitHub API base URL for the ingest (GitHub Enterprise: https://HOST/api/v3); env GITHUB_API_URL.")]
    = None,
    max_wait: Annotated[float | None, typer.Option(
        help=f"Longest single wait, {MAX_WAIT_HELP}, for a rate limit or backoff during the ingest; a longer one "
             "stops it.", parser=wait_seconds)] = None,
    as_json: JsonSummaryOption = False,
) -> None:
    """Refresh everything agents read: review ingest, review build, findings build, migrate apply, index build.

    Each stage is what its own command does (the ingest signs in as the configured GitHub App, else with
    GITHUB_TOKEN or GH_TOKEN); one with nothing to do is skipped with the reason. Exits 1 when any stage failed,
    after running the others. Ctrl-C stops it at once and leaves every store as it was or whole (exit 130).
    """
    root = project_root(project)
    api_url_from(api_url, os.environ)  # a usage error (exit 2) before any stage, as `review ingest` refuses it
    options = SyncOptions(api_url=api_url, max_wait=max_wait, ceiling=disclosure_ceiling())
    outcomes: list[StageOutcome] = []
    for name in STAGES:
        typer.echo(f"sync: {name}…", err=True)  # stderr, so `--json`'s stdout stays the one document
        outcomes.append(run_stage(name, root, replace(options, earlier=list(outcomes))))
    failed = [outcome.stage for outcome in outcomes if outcome.outcome == "failed"]
    if as_json:
        echo_summary({"project": str(root), "stages": [outcome.document() for outcome in outcomes],
                      "failed": failed}, ok=not failed)
    else:
        for line in summary_lines(outcomes):
            typer.echo(with_project(line, named_root(project)))
    _say_if_unregistered(root)
    if failed:
        typer.echo(f"theurian: sync: {', '.join(failed)} failed (see above); the other stages ran", err=True)
        raise typer.Exit(EXIT_FAILED)


def _say_if_unregistered(root: Path) -> None:
    """A note on stderr when no registration names `root`: the stores are built, and no agent can read them yet
    (`init` names the registration as its next step; a read command refuses such a project in the same words)."""
    from theurian.cli.read_commands import registered_id

    try:
        registered_id(root)
    except TheurianError as exc:
        typer.echo(f"note: {exc.message}", err=True)


def summary_lines(outcomes: list[StageOutcome]) -> list[str]:
    """One line per stage (its first line of output or reason), its further lines indented under it, then a
    count."""
    lines = []
    for outcome in outcomes:
        head, *rest = outcome.lines or [""]
        lines.append(f"{outcome.stage:<{_NAME_WIDTH}}  {outcome.outcome:<{_OUTCOME_WIDTH}}  {head}")
        lines.extend(f"{'':<{_NAME_WIDTH + _OUTCOME_WIDTH + 4}}{line}" for line in rest)
    counts = {kind: sum(1 for o in outcomes if o.outcome == kind) for kind in ("done", "skipped", "failed")}
    lines.append(f"sync: {counts['done']} done, {counts['skipped']} skipped, {counts['failed']} failed")
    return lines
