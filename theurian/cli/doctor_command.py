"""`theurian doctor`: every check an operator would otherwise run by hand, as a table of check, state, cure."""

from __future__ import annotations

from typing import Annotated

import typer

from theurian import registry
from theurian.cli.doctor_checks import INSTALLATION_CONFIG_CHECK, daemon_checks, github_checks, installation_checks
from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.project_checks import FAIL, Check, attributed_to, project_checks
from theurian.errors import TheurianError

_MARKS = {"ok": "ok", "warn": "warn", "fail": "FAIL"}


def doctor(
    as_json: JsonSummaryOption = False,
    online: Annotated[bool, typer.Option(
        "--online", help="Also ask the GitHub API whether it answers, and the rate budget left.")] = False,
) -> None:
    """Check Python, git, the installation's files, the daemon, every registered project and the GitHub token.

    Exit 0 when no check fails (a warning names something optional), 1 otherwise; each failing check names
    its cure."""
    installation = installation_checks()
    config = next(c for c in installation if c.name == INSTALLATION_CONFIG_CHECK)
    checks = attributed_to([*installation, *daemon_checks(), *_projects(), *github_checks(online)], config,
                           shown=True)
    failed = any(c.level == FAIL for c in checks)
    if as_json:
        echo_summary({"checks": [{"check": c.name, "level": c.level, "state": c.state, "cure": c.cure}
                                 for c in checks]}, ok=not failed)
    else:
        _table(checks)
    raise typer.Exit(1 if failed else 0)


def _projects() -> list[Check]:
    try:
        snapshot = registry.read()
    except TheurianError:
        return []  # the registry check above already failed, with its cure
    checks = [Check(f"{project_id}: registration", FAIL, "names no root folder", registry.unreadable_cure(project_id))
              for project_id in snapshot.unreadable]
    for registration in snapshot.registrations:
        checks.extend(project_checks(registration.project_id, registration.root))
    return checks


def _table(checks: list[Check]) -> None:
    width = max(len(c.name) for c in checks)
    for check in checks:
        cure = f"  -> {check.cure}" if check.cure and check.level != "ok" else ""
        typer.echo(f"{_MARKS[check.level]:<4}  {check.name:<{width}}  {check.state}{cure}")
    failures = sum(c.level == FAIL for c in checks)
    typer.echo(f"\n{failures} check(s) failed" if failures else "\nevery check passed")
