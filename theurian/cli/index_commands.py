"""`theurian index build`: publish a ranked retrieval index (SQLite FTS5 BM25 and trigram, dense vectors of the
installation's embedding model, optionally a RAPTOR summary tree) over the active knowledge state."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.pasteable import named_root, with_project
from theurian.cli.project_option import ProjectOption, project_root
from theurian.installation import disclosure_ceiling

if TYPE_CHECKING:
    from knowledge.index_pointer import IndexPointer

app = typer.Typer(
    help="Build the ranked retrieval index knowledge.search answers from.", no_args_is_help=True
)


@app.command("build")
def build(
    project: ProjectOption = None,
    raptor: Annotated[bool | None, typer.Option(
        "--raptor/--no-raptor",
        help="Build the extractive summary tree (the summary channel), or drop it; default: as the published "
             "index has it.")] = None,
    as_json: JsonSummaryOption = False,
) -> None:
    """Index the active state (run after `theurian migrate apply`); searches use it while the state matches.

    Only items this installation's disclosure ceiling lets a caller see are indexed. An index built with --raptor
    keeps its summary tree through later builds (and `theurian sync`) until --no-raptor drops it.
    """
    from knowledge.index import build_index  # loads only for this command

    root = project_root(project)
    published = build_index(root, disclosure_ceiling(), raptor=keeps_summary_tree(root) if raptor is None else raptor)
    if as_json:
        echo_summary(index_document(published))
    else:
        typer.echo(index_line(published))


def keeps_summary_tree(root: Path) -> bool:
    """Whether a build given neither --raptor nor --no-raptor builds the summary tree: exactly when the published
    index has one. `index build` and `sync`'s index stage both ask this, so a sync is the command by hand."""
    from knowledge.index_pointer import read_index_pointer

    published = read_index_pointer(root)
    return published is not None and published.raptor_sha256 is not None


def index_document(published: IndexPointer) -> dict[str, Any]:
    """The summary `index build --json` prints (and `sync --json` holds for its index stage)."""
    return {"buildId": published.build_id, "stateHash": published.state_hash,
            "disclosureCeiling": published.disclosure_ceiling, "channels": list(published.channels),
            "embeddingModel": published.model.name if published.model else None}


def index_line(published: IndexPointer) -> str:
    model = published.model.name if published.model else "none"
    return (f"index {published.build_id} built from state {published.state_hash} "
            f"(channels: {', '.join(published.channels)}; embedding model: {model})")


@app.command("status")
def status(
    project: ProjectOption = None,
    as_json: JsonSummaryOption = False,
) -> None:
    """Whether the index is the one knowledge.search ranks with: current, degraded (ranked by its word channels
    alone: the embedding model cannot be loaded, or is not the one that made its vectors), stale, built under
    another disclosure ceiling, unreadable (damaged), foreign (not built by this installation), superseded (an
    earlier index format), or not built. Exit 0 when current (or when there is no state to index), 1 otherwise:
    knowledge.search would fall back to substring search, or rank without its dense channel."""
    from knowledge.index_status import HEALTHY, index_status

    report = index_status(project_root(project), disclosure_ceiling())
    healthy = report.state in HEALTHY
    if as_json:
        index = report.index
        echo_summary({
            "state": report.state,
            "buildId": index.build_id if index else None,
            "indexedState": index.state_hash if index else None,
            "activeState": report.active.state_hash if report.active else None,
            "disclosureCeiling": index.disclosure_ceiling if index else None,
            "channels": report.channels,
            "unavailableChannels": report.gap.document() if report.gap else [],
            "reason": report.gap.reason if report.gap else report.reason,
            "cure": report.cure,
        }, ok=healthy)
    else:
        typer.echo(with_project(report.describe(), named_root(project)))
    if not healthy:
        raise typer.Exit(1)
