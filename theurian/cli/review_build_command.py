"""`theurian review build`: project the evidence lake into the review store review.search answers from."""

from __future__ import annotations

from typing import Annotated

import typer

from theurian.cli.project_option import ProjectOption, project_root
from theurian.errors import PathEscapeError
from theurian.interrupts import import_duckdb_held

JobsOption = Annotated[int | None, typer.Option(
    "--jobs", "-j", min=1, max=256,
    help="Processes that read the lake (default: one per CPU, each with at least 5,000 files). "
         "The store is the same whatever the number.",
)]


def build(project: ProjectOption = None, jobs: JobsOption = None) -> None:
    """Rebuild .theurian/state/review-store.duckdb from every record file under .theurian/review/.

    Each file is validated against schemas/evidence/; an invalid one is reported by its project-relative path
    and skipped, and the build still succeeds. The new store replaces the old one atomically, so a daemon
    serving the old store keeps serving it until it next opens the store.
    """
    # Imported here: `theurian --version` must not pay for DuckDB.
    import_duckdb_held()
    from projection.review_build import build_review_store
    from projection.review_store import ReviewStoreEscapeError
    from serve.refusal import path_escape_refusal
    from serve.tools.review import REVIEW_STORE_ESCAPE_REFUSAL

    root = project_root(project)
    try:
        summary = build_review_store(root, processes=jobs)
    except ReviewStoreEscapeError as exc:
        # The daemon answers the same escape with the same words: the rebuild cannot cure it, removing it can.
        raise ReviewStoreEscapeError(REVIEW_STORE_ESCAPE_REFUSAL, relative=exc.relative, cured=True) from exc
    except PathEscapeError as exc:
        # The cure for what escaped: a lake that escapes is source, which removing `.theurian/state` cannot mend.
        raise PathEscapeError(path_escape_refusal(exc.relative), relative=exc.relative, cured=True) from exc
    typer.echo(summary.describe())
