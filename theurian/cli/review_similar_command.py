"""`theurian review similar "SITUATION"`: review.findSimilar at the command line (a table, or its JSON answer).

The arguments go to the tool itself (`theurian.cli.read_commands.answer_as_agent`, as `review search` does): the
same input schema, checks, refusal text and exit code an agent meets, and the project resolved from the registry
(an unregistered folder is refused here as an agent would be).
"""

from __future__ import annotations

from typing import Annotated, Any, Final

import typer

from evidence.records import THREAD_STATES
from theurian.cli.json_summary import JsonSummaryOption
from theurian.cli.pasteable import named_root
from theurian.cli.project_option import ProjectOption
from theurian.cli.read_commands import CsvOption, LimitOption, answer_as_agent, print_answer

_COLUMNS: Final = [("sim", "similarity"), ("fused", "fusedScore"), ("found by", "foundBy"), ("kind", "kind"),
                   ("repository", "repository"), ("pr", "pullRequest"), ("state", "threadState"),
                   ("file", "filePath"), ("excerpt", "excerpt")]


def similar(
    situation: Annotated[str, typer.Argument(help="What you are about to do or what you saw (1-2000 characters).")],
    repository: Annotated[str | None, typer.Option(help="Only this OWNER/NAME, exact.")] = None,
    file_path: Annotated[str | None, typer.Option("--file-path", help="Only threads anchored at this path.")] = None,
    thread_state: Annotated[str | None, typer.Option(
        "--thread-state", help=f"Only threads in this state: {', '.join(THREAD_STATES)}.")] = None,
    kind: Annotated[str | None, typer.Option(help="review-thread or review-submission.")] = None,
    limit: LimitOption = None,
    as_json: JsonSummaryOption = False,
    csv_out: CsvOption = False,
    project: ProjectOption = None,
) -> None:
    """Review threads and submissions whose meaning is nearest SITUATION, nearest first (as review.findSimilar)."""
    arguments = {"situation": situation, "repository": repository, "filePath": file_path,
                 "threadState": thread_state, "kind": kind, "limit": limit}
    answer = answer_as_agent("review.findSimilar", project, arguments, as_json, csv_out)
    retrieval = answer["retrieval"]
    print_answer("review.findSimilar", answer, "records", as_json, csv_out, _COLUMNS, shown=_shown,
                 notes=[f"model {retrieval['model']}", f"store {retrieval['storeBuildId']}"],
                 empty=_empty_line(retrieval, filtered=any(
                     value is not None for value in (repository, file_path, thread_state, kind))),
                 root=named_root(project))


def _empty_line(retrieval: dict[str, Any], *, filtered: bool) -> str:
    """Why the answer is empty: nothing to compare (the filters admitted no record, or the store holds no thread or
    submission with text), or nothing near enough."""
    if retrieval["compared"] == 0 and filtered:
        return ("no record matched the filters, so nothing was compared (each filter is exact and case-sensitive; "
                "`theurian review search` shows the spellings stored)")
    if retrieval["compared"] == 0:
        return "nothing to compare: the review store holds no review thread or review submission with text"
    return (f"nothing like this came up in review: no record's similarity reached the floor "
            f"({retrieval['similarityFloor']}; model {retrieval['model']})")


def _shown(record: dict[str, Any]) -> dict[str, Any]:
    """A record as its table line shows it: the scores to two places, the channels joined."""
    return {**record, "similarity": f"{record['similarity']:.2f}", "fusedScore": f"{record['fusedScore']:.2f}",
            "foundBy": "+".join(record["foundBy"])}
