"""`theurian project status [ID]`: one project (or every registered one) at a glance — the lake by repository
and kind, the last ingest of each repository, each store's state as `theurian doctor` judges it, and proposals."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Final

import typer

from theurian import registry
from theurian.cli.doctor_checks import installation_config_check
from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.lake_damage_words import line as damage_line
from theurian.cli.pasteable import with_project
from theurian.cli.project_checks import Check, attributed_to, project_checks
from theurian.cli.review_freshness import NEVER_INGESTED, interrupted_next_step, interrupted_runs, run_state

# What `project status` and `project list` say of an empty registry, and how to fill it.
NO_PROJECTS_REGISTERED: Final = "no projects registered (theurian project register PATH)"

# What `--json` shows of a repository's last run manifest (an interrupted one adds `interrupted` and `nextStep`).
_LAST_INGEST_KEYS: Final = ("runId", "status", "mode", "startedAt", "finishedAt", "window", "error")


def status(
    project_id: Annotated[str | None, typer.Argument(help="A registered id; default: every registered project.")]
    = None,
    as_json: JsonSummaryOption = False,
) -> None:
    """Per project: lake size, last ingest per repository, stores (built when, stale or not), knowledge state,
    index freshness and pending proposals."""
    snapshot = registry.read()
    chosen = snapshot.registrations if project_id is None else [snapshot.find(project_id)]
    if project_id is not None and chosen[0] is None:
        raise registry.not_registered(project_id)
    config = installation_config_check()  # not a row here: its fault is named in each row that met it
    judged = [(r, attributed_to(project_checks(r.project_id, r.root), config, shown=False))
              for r in chosen if r is not None]
    documents = [_document(r.project_id, r.root, checks) for r, checks in judged]
    if as_json:
        echo_summary({"projects": documents})
        return
    if not documents:
        typer.echo(NO_PROJECTS_REGISTERED)
    for document, (_, checks) in zip(documents, judged, strict=True):
        _print(document, {c.name.removeprefix(f"{document['projectId']}: "): c.listed_state
                          for c in checks if c.files})


def _document(project_id: str, root: Path, checks: list[Check]) -> dict[str, Any]:
    prefix = f"{project_id}: "
    document: dict[str, Any] = {
        "projectId": project_id, "root": str(root),
        "state": {c.name.removeprefix(prefix): {"level": c.level, "state": c.state, "cure": c.cure} for c in checks},
        "repositories": [], "proposals": {},
        # Every damaged lake file, as `review status` names it, from the lake row above (judged once, cheaply).
        "damagedEntries": [entry for c in checks for entry in c.files],
    }
    if root.is_dir() and (root / ".theurian").is_dir():
        document["repositories"] = _repositories(root)
        document["proposals"] = _proposals(root)
    return document


def _repositories(root: Path) -> list[dict[str, Any]]:
    from evidence.lake import Lake

    lake = Lake(root)
    manifests = lake.scan_manifests().manifests
    rows: list[dict[str, Any]] = []
    for folder in lake.repository_folders():
        runs = [m for m in manifests if m["repositoryFolder"] == folder]
        rows.append({"repository": runs[-1]["repository"] if runs else lake.repository_named_in(folder),
                     "records": lake.folder_record_counts(folder), "lastIngest": dict(runs[-1]) if runs else None})
    # Given the whole manifest: the resume command needs its repository, mode, window and options.
    interrupted_runs(root, [row["lastIngest"] for row in rows if row["lastIngest"]])
    for row in rows:
        if (last := row["lastIngest"]) is not None:
            row["lastIngest"] = {key: last.get(key) for key in _LAST_INGEST_KEYS} | {
                key: last[key] for key in ("interrupted", "nextStep") if key in last}
    return rows


def _proposals(root: Path) -> dict[str, int]:
    from knowledge.proposal_lifecycle import list_proposals

    counts: dict[str, int] = {}
    for proposal in list_proposals(root):
        counts[proposal.status] = counts.get(proposal.status, 0) + 1
    return counts


def _print(document: dict[str, Any], listed_states: dict[str, str]) -> None:
    """`document` as text; `listed_states`: the state each row whose files the `damaged:` lines name says instead."""
    typer.echo(f"{document['projectId']}  {document['root']}")
    for row in document["repositories"]:
        records = ", ".join(f"{n} {kind}" for kind, n in row["records"].items())
        last = row["lastIngest"]
        ingest = NEVER_INGESTED if last is None else (
            f"last ingest {run_state(last)} {last['finishedAt'] or last['startedAt']} ({last['mode']}, since "
            f"{(last.get('window') or {}).get('since') or 'the beginning'})")
        if last is not None and last.get("interrupted"):
            ingest += f": {interrupted_next_step(last['nextStep'], Path(document['root']))}"
        typer.echo(f"  {row['repository'] or '(repository unknown)'}: {records}; {ingest}")
    for entry in document["damagedEntries"]:
        typer.echo(f"  {damage_line(entry)}")
    for name, check in document["state"].items():
        if name in listed_states:  # its cure is each file's, on that file's line
            typer.echo(f"  {name}: {listed_states[name]}  [{check['level']}]")
            continue
        mark = "" if check["level"] == "ok" else f"  [{check['level']}] -> {check['cure']}"
        typer.echo(f"  {name}: {check['state']}{mark}")
    pending = document["proposals"].get("pending", 0)
    listed = with_project(" (`theurian propose list`)", Path(document["root"])) if pending else ""
    typer.echo(f"  proposals: {pending} pending{listed}")
