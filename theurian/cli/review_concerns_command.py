"""`theurian review concerns`: review.listConcerns at the command line (a table, or its JSON answer).

The arguments go to the tool itself (`theurian.cli.read_commands.answer_as_agent`, as `review search` does): the
same input schema, checks, refusal text and exit code an agent meets, and the project resolved from the registry
(an unregistered folder is refused here as an agent would be).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Final

import typer

from theurian.cli.json_summary import JsonSummaryOption
from theurian.cli.pasteable import named_root
from theurian.cli.project_option import ProjectOption, project_root
from theurian.cli.read_commands import CsvOption, LimitOption, answer_as_agent, print_answer

_COLUMNS: Final = [("concern", "concernId"), ("PRs", "pullRequests"), ("revs", "reviewers"),
                   ("repos", "repositories"), ("members", "memberCount"), ("gate", "gatePassing"),
                   ("excerpt", "excerpt")]


def concerns(
    repository: Annotated[str | None, typer.Option(help="Only concerns with a member in this OWNER/NAME.")] = None,
    min_pull_requests: Annotated[int | None, typer.Option(
        "--min-pull-requests", help="Only concerns raised in at least this many pull requests.")] = None,
    q: Annotated[str | None, typer.Option(help="A literal substring of the representative text.")] = None,
    limit: LimitOption = None,
    as_json: JsonSummaryOption = False,
    csv_out: CsvOption = False,
    project: ProjectOption = None,
) -> None:
    """The recurring review concerns the last `theurian review build` found, most widely recurring first."""
    arguments = {"repository": repository, "minPullRequests": min_pull_requests, "q": q, "limit": limit}
    answer = answer_as_agent("review.listConcerns", project, arguments, as_json, csv_out)
    print_answer("review.listConcerns", answer, "concerns", as_json, csv_out, _COLUMNS,
                 empty=("no recurring concern matches: none was found by the last `theurian review build`, or none "
                        "passes these filters"), root=named_root(project))
    if not (as_json or csv_out) and answer["concerns"]:
        command, *said = _next_lines(answer["concerns"], project_root(project))
        typer.echo(f"next: {command}")
        for line in said:  # under the command, so the line to paste holds the command alone
            typer.echo(f"  {line}")


def _next_lines(concerns: list[dict[str, Any]], root: Path) -> list[str]:
    """The command drafting the first listed concern a candidate can come from (one with a member thread passing
    the promotion gate), whole: `propose candidate` needs nine options, and a hint naming one was a line that
    failed when pasted. None passing: why none can be drafted yet."""
    from theurian.cli.propose_commands import candidate_line

    draftable = next((row for row in concerns if row["gatePassing"] > 0), None)
    if draftable is None:
        return ["no concern listed has a member thread that passes the promotion gate (resolved, on a merged pull "
                "request whose CI succeeded, with a comment), so none can be drafted into a candidate yet"]
    return candidate_line(draftable["concernId"], root)
