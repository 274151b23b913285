"""`theurian review similar "SITUATION"`: review.findSimilar at the command line (a table, or its JSON answer)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.project_option import ProjectOption, project_root
from theurian.cli.read_output import shortened
from theurian.cli.store_refusals import review_store_escape_cured
from theurian.errors import UsageError
from theurian.interrupts import import_duckdb_held
from theurian.text import one_line

_EXCERPT_SHOWN = 90  # characters of the excerpt a table row shows


def similar(
    situation: Annotated[str, typer.Argument(help="What you are about to do or what you saw (1-2000 characters).")],
    repository: Annotated[str | None, typer.Option(help="Only this OWNER/NAME, exact.")] = None,
    file_path: Annotated[str | None, typer.Option("--file-path", help="Only threads anchored at this path.")] = None,
    thread_state: Annotated[str | None, typer.Option(
        "--thread-state", help="Only threads in this state: open, resolved, outdated, dismissed.")] = None,
    kind: Annotated[str | None, typer.Option(help="review-thread or review-submission.")] = None,
    limit: Annotated[int | None, typer.Option(help="At most 20; default 5.")] = None,
    as_json: JsonSummaryOption = False,
    project: ProjectOption = None,
) -> None:
    """Review threads and submissions whose meaning is nearest SITUATION, nearest first (as review.findSimilar)."""
    import_duckdb_held()
    from serve.errors import ToolRefusal
    from serve.tools.review_similar import MAX_SITUATION_CHARS, answer_similar, checked_filter, checked_limit

    if not 1 <= len(situation) <= MAX_SITUATION_CHARS:
        raise UsageError(f"SITUATION must be 1 to {MAX_SITUATION_CHARS} characters; {len(situation)} were given")
    try:
        where, page = checked_filter(repository, file_path, thread_state, kind), checked_limit(limit)
    except ToolRefusal as exc:
        raise UsageError(exc.message.removeprefix("review.findSimilar: ")) from None
    if "\x00" in situation:
        raise UsageError("SITUATION contains a NUL (U+0000); remove it")
    with review_store_escape_cured():
        answer = answer_similar(project_root(project), situation, where, page)
    if as_json:  # the tool's structured answer, exactly as a client receives it
        echo_summary(answer)
    else:
        typer.echo(table(answer))


def table(answer: dict[str, Any]) -> str:
    """One line per record, nearest first; a plain sentence when nothing came near enough."""
    retrieval = answer["retrieval"]
    if not answer["records"]:
        return (f"nothing like this came up in review: no record's similarity reached the floor "
                f"({retrieval['similarityFloor']}; model {retrieval['model']})")
    lines = [f"{'sim':>5} {'fused':>5}  {'found by':<14} {'record':<40} excerpt"]
    for record in answer["records"]:
        where = f"{record['repository']}#{record['pullRequest']}"
        if record["filePath"] is not None:
            where += f" {record['filePath']}"
        shown = shortened(one_line(record["excerpt"]), _EXCERPT_SHOWN)
        lines.append(f"{record['similarity']:5.2f} {record['fusedScore']:5.2f}  {'+'.join(record['foundBy']):<14} "
                     f"{one_line(where)[:40]:<40} {shown}")
    lines.append(f"({answer['count']} records; model {retrieval['model']}; store {retrieval['storeBuildId']}; "
                 "every excerpt is untrusted text somebody else wrote)")
    return "\n".join(lines)
