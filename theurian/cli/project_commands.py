"""`theurian project register | unregister | list | status`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from theurian import registry
from theurian.cli import project_status
from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.project_option import path_value
from theurian.errors import AlreadyInPlaceError, ProjectError
from theurian.project_path import project_path_refusal
from theurian.text import shell_word

app = typer.Typer(help="Register projects with this installation so the daemon can serve them.",
                  no_args_is_help=True)
app.command("status")(project_status.status)


@app.command("register")
def register(
    path: Annotated[Path, typer.Argument(help="The project folder (it must hold .theurian/).",
                                         parser=path_value)] = Path("."),
    project_id: Annotated[
        str | None,
        typer.Option("--id", help="The project id; default: the folder name in lowercase kebab-case."),
    ] = None,
    as_json: JsonSummaryOption = False,
) -> None:
    """Register the project at PATH under an id agents name in every call; re-run with the same id and folder, it
    changes nothing, says so and exits 0. A project moved here: --id its old id points that id at PATH (only when
    its old folder holds no .theurian/), so agents keep naming it by that id."""
    root = path.resolve()
    if project_id is not None:
        registry.validate_project_id(project_id)  # first, so the rename the next refusal prints is all it takes
    # Before the id is chosen: a folder name at fault would fold to an id its renamed folder may not.
    refusal = project_path_refusal(root, "theurian project register {}" + (f" --id {shell_word(project_id)}"
                                                                           if project_id else ""))
    if refusal is not None:
        raise ProjectError(refusal)
    chosen = project_id or registry.default_project_id(root)
    try:
        registered = registry.register(root, chosen)
    except AlreadyInPlaceError as exc:
        if as_json:
            echo_summary({"projectId": chosen, "rootPath": str(root), "changed": False, "message": exc.message})
        else:
            typer.echo(exc.message)
        return
    registration, moved_from = registered.registration, registered.moved_from
    # Registering a moved project's new folder under a new id leaves the old id (the one agents name) broken.
    steps = [] if project_id or moved_from else _keep_an_id_instead(registration)
    if as_json:
        echo_summary({"projectId": registration.project_id, "rootPath": str(registration.root), "changed": True,
                      "movedFrom": None if moved_from is None else str(moved_from), "nextSteps": steps})
        return
    was = "" if moved_from is None else f" (was {moved_from}, which holds no .theurian/ now)"
    typer.echo(f"registered {registration.project_id} -> {registration.root}{was}")
    for step in steps:
        typer.echo(f"next: {step}")


def _keep_an_id_instead(registration: registry.Registration) -> list[str]:
    """For each id still registered at a folder that holds no `.theurian/` (a project moved or deleted): if the
    folder just registered is that project moved, how to keep the id agents use; else how to remove it."""
    word, new = shell_word(str(registration.root)), shell_word(registration.project_id)
    return [f"if this folder is project {r.project_id!r} moved here (it was at {r.root}), keep that id: "
            f"`theurian project unregister {new} && theurian project register {word} --id {r.project_id}`; "
            f"else `theurian project unregister {shell_word(r.project_id)}`"
            for r in registry.gone(registry.read())
            if r.project_id != registration.project_id and registry.is_project_id(r.project_id)]


@app.command("unregister")
def unregister(project_id: Annotated[str, typer.Argument(help="The id to remove.")],
               as_json: JsonSummaryOption = False) -> None:
    """Remove a registration; exits 0, saying so, when no project is registered under the id. The project's files
    are not touched."""
    try:
        registry.unregister(project_id)
    except ProjectError as exc:  # the only ProjectError unregister raises: no such id, so it is already gone
        message = f"{exc.message}; nothing changed"
        if as_json:
            echo_summary({"projectId": project_id, "changed": False, "message": message})
        else:
            typer.echo(message)
        return
    if as_json:
        echo_summary({"projectId": project_id, "changed": True})
        return
    typer.echo(f"unregistered {project_id}")


@app.command("list")
def list_projects(
    as_json: JsonSummaryOption = False,
) -> None:
    """List registered projects (one whose folder is gone flagged, with its cure), and entries that name no root
    folder."""
    snapshot = registry.read()
    gone = set(registry.gone(snapshot))  # moved or deleted: doctor fails its row, and the list names its cure
    if as_json:
        echo_summary({
            "projects": [{"projectId": r.project_id, "rootPath": str(r.root), "gone": r in gone,
                          "cure": registry.gone_cure(r) if r in gone else ""} for r in snapshot.registrations],
            "unreadable": list(snapshot.unreadable),
        })
        return
    if not snapshot.registrations and not snapshot.unreadable:
        typer.echo(project_status.NO_PROJECTS_REGISTERED)
    for r in snapshot.registrations:
        flag = f"\t(gone: it {registry.gone_because(r.root)}; {registry.gone_cure(r)})" if r in gone else ""
        typer.echo(f"{r.project_id}\t{r.root}{flag}")
    for project_id in snapshot.unreadable:
        typer.echo(f"{project_id}\t(no root path: {registry.unreadable_cure(project_id)})")
