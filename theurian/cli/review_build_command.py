"""`theurian review build`: project the evidence lake into the review store review.search answers from."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.project_option import ProjectOption, project_root
from theurian.errors import PathEscapeError
from theurian.interrupts import import_duckdb_held
from theurian.text import shell_word

if TYPE_CHECKING:
    from projection.review_build import BuildSummary

JobsOption = Annotated[int | None, typer.Option(
    "--jobs", "-j", min=1, max=256,
    help="Processes that read the lake (default: one per CPU, each with at least 5,000 files). "
         "The store is the same whatever the number.",
)]
FullOption = Annotated[bool, typer.Option(
    "--full", help="Read every record file again, trusting no file identity the last build recorded. "
                   "The store is the same either way; only slower.",
)]


def build(project: ProjectOption = None, jobs: JobsOption = None, full: FullOption = False,
          as_json: JsonSummaryOption = False) -> None:
    """Rebuild .theurian/state/review-store.duckdb from every record file under .theurian/review/.

    Each file is validated against schemas/evidence/; an invalid one is reported by its project-relative path
    and skipped, and the build still succeeds. The new store replaces the old one atomically, so a daemon
    serving the old store keeps serving it until it next opens the store. A record whose file is unchanged since
    the last build (same device, inode, size, mtime and ctime) is taken over from the store it replaces.
    """
    root = project_root(project)
    summary = run_build(root, jobs, full=full)
    if as_json:
        echo_summary(build_document(summary))
        return
    typer.echo(summary.describe())
    if (note := skipped_note(summary, root)) is not None:
        typer.echo(note, err=True)  # stderr: the summary's last line stays the `built` line


def skipped_note(summary: BuildSummary, root: Path) -> str | None:
    """Where the cure of each file `summary` skipped is named, or None when it skipped none: a skipped file is
    damage only an ingest or a removal mends, never another build. `review build` and `sync` both print it."""
    if not summary.skipped:
        return None
    return (f"note: `theurian review status --project {shell_word(str(root))}` names the command that mends each "
            "skipped file")


def run_build(root: Path, jobs: int | None = None, *, full: bool = False) -> BuildSummary:
    """Build the review store of the project at `root`, escapes translated into the words the daemon uses for
    them. `review build` and `sync` both run this.

    Raises:
        ReviewStoreEscapeError, PathEscapeError: cured messages (the cure for what escaped).
        TheurianError: whatever `build_review_store` raises.
    """
    # Imported here: `theurian --version` must not pay for DuckDB.
    import_duckdb_held()
    from projection.errors import ReviewStoreEscapeError
    from projection.review_build import build_review_store
    from projection.review_store import REVIEW_STORE_ESCAPE_REFUSAL
    from theurian.places import path_escape_refusal

    # Not `store_refusals.review_store_escape_cured`: ReviewStoreEscapeError is a PathEscapeError, so the cured one
    # it raises would be caught again below and given the lake's cure; sibling except clauses keep them apart.
    try:
        return build_review_store(root, processes=jobs, full=full)
    except ReviewStoreEscapeError as exc:
        # The daemon answers the same escape with the same words: the rebuild cannot cure it, removing it can.
        raise ReviewStoreEscapeError(REVIEW_STORE_ESCAPE_REFUSAL, relative=exc.relative, cured=True) from exc
    except PathEscapeError as exc:
        # The cure for what escaped: a lake that escapes is source, which removing `.theurian/state` cannot mend.
        raise PathEscapeError(path_escape_refusal(exc.relative), relative=exc.relative, cured=True) from exc


def build_document(summary: BuildSummary) -> dict[str, Any]:
    """The summary `review build --json` prints (and `sync --json` holds for its review-build stage)."""
    return {
        "store": summary.store,
        "buildId": summary.build_id,
        "records": summary.records,
        "texts": summary.texts,
        "skipped": [{"path": path, "reason": why} for path, why in summary.skipped],
        "processes": summary.processes,
        "recordsReused": summary.records_reused,
        "embedded": summary.embedded,
        "vectorsReused": summary.reused,
        "concerns": summary.concerns,
        "clusteringReused": summary.clustering_reused,
        "clusteringAhead": summary.clustering_ahead,
    }
