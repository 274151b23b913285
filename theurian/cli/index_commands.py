"""`theurian index build`: publish a ranked retrieval index (SQLite FTS5 BM25 and trigram, dense vectors of the
installation's embedding model, optionally a RAPTOR summary tree) over the active knowledge state."""

from __future__ import annotations

from typing import Annotated

import typer

from theurian.cli.project_option import ProjectOption, project_root
from theurian.installation import disclosure_ceiling

app = typer.Typer(
    help="Build the ranked retrieval index knowledge.search answers from.", no_args_is_help=True
)


@app.command("build")
def build(
    project: ProjectOption = None,
    raptor: Annotated[
        bool, typer.Option("--raptor", help="Also build the extractive summary tree (the summary channel).")
    ] = False,
) -> None:
    """Index the active state (run after `theurian migrate apply`); searches use it while the state matches.

    Only items this installation's disclosure ceiling lets a caller see are indexed.
    """
    from knowledge.index import build_index  # loads only for this command

    published = build_index(project_root(project), disclosure_ceiling(), raptor=raptor)
    model = published.model.name if published.model else "none"
    typer.echo(
        f"index {published.build_id} built from state {published.state_hash} "
        f"(channels: {', '.join(published.channels)}; embedding model: {model})"
    )
