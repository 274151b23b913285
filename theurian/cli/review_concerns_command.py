"""`theurian review concerns`: review.listConcerns at the command line (a table, or its JSON answer).

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

_EXCERPT_SHOWN = 80  # characters of the excerpt a table row shows


def concerns(
    repository: Annotated[str | None, typer.Option(help="Only concerns with a member in this OWNER/NAME.")] = None,
    min_pull_requests: Annotated[int | None, typer.Option(
        "--min-pull-requests", help="Only concerns raised in at least this many pull requests.")] = None,
    q: Annotated[str | None, typer.Option(help="A literal substring of the representative text.")] = None,
    limit: Annotated[int | None, typer.Option(help="At most 20; default 10.")] = None,
    as_json: JsonSummaryOption = False,
    project: ProjectOption = None,
) -> None:
    """The recurring review concerns the last `theurian review build` found, most widely recurring first."""
    arguments = {"repository": repository, "minPullRequests": min_pull_requests, "q": q, "limit": limit}
    answer = answer_as_agent("review.listConcerns", project, arguments)
    if as_json:  # the tool's structured answer, exactly as a client receives it
        echo_summary(answer)
    else:
        typer.echo(table(answer))


def table(answer: dict[str, Any]) -> str:
    """One line per concern, most widely recurring first; a plain sentence when there is none."""
    if not answer["concerns"]:
        return "no recurring concern matches: none was found by the last `theurian review build`, or none passes " \
               "these filters"
    lines = [f"{'concern':<32} {'PRs':>4} {'revs':>4} {'repos':>5} {'members':>7} {'gate':>4}  excerpt"]
    for row in answer["concerns"]:
        shown = shortened(one_line(row["excerpt"]), _EXCERPT_SHOWN)
        lines.append(f"{row['concernId']:<32} {row['pullRequests']:>4} {row['reviewers']:>4} "
                     f"{row['repositories']:>5} {row['memberCount']:>7} {row['gatePassing']:>4}  {shown}")
    more = "; more match (raise --limit)" if answer["truncated"] else ""
    lines.append(f"({answer['count']} concerns{more}; every excerpt is untrusted text somebody else wrote; draft one "
                 "with `theurian propose candidate --concern ID`)")
    return "\n".join(lines)
