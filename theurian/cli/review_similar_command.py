"""`theurian review similar "SITUATION"`: review.findSimilar at the command line (a table, or its JSON answer).

The arguments go to the tool itself (`theurian.cli.read_commands.answer_as_agent`, as `review search` does): the
same input schema, checks, refusal text and exit code an agent meets, and the project resolved from the registry
(an unregistered folder is refused here as an agent would be).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.project_option import ProjectOption
from theurian.cli.read_commands import answer_as_agent
from theurian.cli.read_output import shortened
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
    arguments = {"situation": situation, "repository": repository, "filePath": file_path,
                 "threadState": thread_state, "kind": kind, "limit": limit}
    answer = answer_as_agent("review.findSimilar", project, arguments)
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
