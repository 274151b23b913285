"""`theurian migrate apply | status`: build the canonical knowledge state from the project's migrations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.pasteable import named_root, with_project
from theurian.cli.project_option import ProjectOption, project_root

if TYPE_CHECKING:
    from knowledge.apply import ApplyOutcome

app = typer.Typer(
    help="Apply the project's knowledge migrations (.theurian/migrations/) and report on them.",
    no_args_is_help=True,
)

@app.command("apply")
def apply(project: ProjectOption = None, as_json: JsonSummaryOption = False) -> None:
    """Validate every migration and body hash, then apply the pending ones into a new state database.

    Nothing changes when any migration is invalid, an applied one was edited (MIGRATION_CHECKSUM_MISMATCH)
    or a revision conflicts (REVISION_CONFLICT). Exits 0 when everything is already applied.
    """
    from knowledge.apply import apply_migrations  # jsonschema and yaml load only for this command

    outcome = apply_migrations(project_root(project))
    if as_json:
        echo_summary(apply_document(outcome))
        return
    for line in apply_lines(outcome):
        typer.echo(line)


def apply_document(outcome: ApplyOutcome) -> dict[str, Any]:
    """The summary `migrate apply --json` prints (and `sync --json` holds for its migrate stage)."""
    return {
        "applied": outcome.applied_now,
        "rebuilt": outcome.rebuilt,
        "stateHash": outcome.pointer.state_hash,
        "appliedMigrations": outcome.pointer.migration_count,
    }


def apply_lines(outcome: ApplyOutcome) -> list[str]:
    """What `migrate apply` prints: each migration applied now, then the active state."""
    pointer = outcome.pointer
    lines = [f"applied {name}" for name in outcome.applied_now]
    if not outcome.rebuilt:
        lines.append(f"nothing pending; state {pointer.state_hash} holds {pointer.migration_count} migration(s)")
    else:
        lines.append(f"state {pointer.state_hash} is active ({pointer.migration_count} migration(s))")
    return lines


@app.command("status")
def status(project: ProjectOption = None, as_json: JsonSummaryOption = False) -> None:
    """List the applied migrations (in order) and the pending ones; flag any applied file that was edited."""
    from knowledge.apply import REFUSED_STATE, REFUSED_STATE_CURE, migration_status

    report = migration_status(project_root(project))
    if as_json:
        echo_summary({
            "refused": report.refused,
            "applied": [{"file": a.file_name, "id": a.migration_id, "checksum": a.checksum} for a in report.applied],
            "pending": report.pending,
            "edited": report.edited,
        })
        return
    if report.refused:
        typer.echo(f"refused\t{REFUSED_STATE}: every migration reads as pending; cure: "
                   f"{with_project(REFUSED_STATE_CURE, named_root(project))}")
    if not report.applied and not report.pending:
        typer.echo("no migrations (write one under .theurian/migrations/)")
    for applied in report.applied:
        if applied.file_name not in report.edited:
            mark = "applied"
        elif applied.file_name in report.removed:  # as `migrate apply` words it: the file is gone, not changed
            mark = "applied (REMOVED since: MIGRATION_CHECKSUM_MISMATCH)"
        else:
            mark = "applied (EDITED since: MIGRATION_CHECKSUM_MISMATCH)"
        typer.echo(f"{mark}\t{applied.file_name}")
    for name in report.pending:
        typer.echo(f"pending\t{name}")


@app.command("validate")
def validate(project: ProjectOption = None, as_json: JsonSummaryOption = False) -> None:
    """Check every migration and knowledge body, and replay them all in memory, without applying anything.

    Fails (exit 1) on what `migrate apply` would refuse: an invalid migration or body hash, an applied migration
    edited since (MIGRATION_CHECKSUM_MISMATCH), a revision conflict.
    """
    from knowledge.apply import migration_status, recorded_migrations
    from knowledge.errors import MigrationChecksumMismatchError
    from knowledge.rehearsal import rehearse

    root = project_root(project)
    migrations = rehearse(root, make_salt=True)  # a secret's refusal then names its fingerprint, as apply's does
    report = migration_status(root)
    if report.edited:
        _, applied, _ = recorded_migrations(root)
        edited = next(a for a in applied if a.file_name == report.edited[0])
        current = next((m for m in migrations if m.file_name == edited.file_name), None)
        raise MigrationChecksumMismatchError(edited.file_name, recorded=edited.checksum,
                                             actual=current.checksum if current else None)
    if as_json:
        echo_summary({"valid": len(migrations), "pending": report.pending})
        return
    typer.echo(f"{len(migrations)} migration(s) valid, {len(report.pending)} pending; nothing was applied")
