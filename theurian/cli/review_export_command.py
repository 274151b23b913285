"""`theurian review export --parquet DIR`: the verified review store as Parquet partitioned by repository, for
engines on other machines (DuckDB, Spark, Trino; docs/export.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.project_option import ProjectOption, path_value, project_root
from theurian.cli.store_refusals import review_store_escape_cured
from theurian.interrupts import import_duckdb_held


def export(
    parquet: Annotated[Path, typer.Option(
        "--parquet", help="A new (or empty) folder to write records/, texts/ and vectors/ into.",
        parser=path_value)],
    as_json: JsonSummaryOption = False,
    project: ProjectOption = None,
) -> None:
    """Write the built review store (records, texts, embeddings) as Parquet partitioned by repository, the store's
    build id in each file's metadata. Written beside DIR and renamed into place: an interrupted export leaves
    nothing under DIR."""
    root = project_root(project)
    import_duckdb_held()
    from projection.review_export import export_parquet

    with review_store_escape_cured():
        summary = export_parquet(root, parquet)
    if as_json:
        echo_summary({"target": str(summary.target), "buildId": summary.build_id, "rows": summary.rows,
                      "repositories": summary.repositories})
    else:
        typer.echo(summary.describe())
