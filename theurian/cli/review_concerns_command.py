"""`theurian review concerns`: review.listConcerns at the command line (a table, or its JSON answer).

The arguments go to the tool itself (`theurian.cli.read_commands.answer_as_agent`, as `review search` does): the
same input schema, checks, refusal text and exit code an agent meets, and the project resolved from the registry
(an unregistered folder is refused here as an agent would be).
"""

from __future__ import annotations

from typing import Annotated, Final

import typer

from theurian.cli.json_summary import JsonSummaryOption
from theurian.cli.project_option import ProjectOption
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
                 notes=["draft one with `theurian propose candidate --concern ID`"],
                 empty=("no recurring concern matches: none was found by the last `theurian review build`, or none "
                        "passes these filters"))
