"""`theurian review search`, `theurian knowledge search`, `theurian findings list`: what an agent would be answered,
read from the command line.

Each sends its arguments to the tool itself (`serve.local_call`): the same published input schema, the same
argument checks and refusal wording, the same row shaping, and the project resolved from the registry as the
daemon resolves a `projectId` (so an unregistered folder is refused here as an agent would be). Only options given
are sent: an option left out is an argument omitted, never a default this module chose.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Final

import typer

from projection.trailers import REVIEWERS, SEVERITIES
from theurian import registry
from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.pasteable import named_root, with_project
from theurian.cli.project_option import ProjectOption, project_root
from theurian.cli.read_output import as_csv, as_table, terminal_width
from theurian.errors import ProjectError, TheurianError, UsageError
from theurian.hidden_characters import CLASSES, FIELD, labelled
from theurian.installation import disclosure_ceiling
from theurian.project_path import project_path_refusal
from theurian.text import shell_word

CsvOption = Annotated[bool, typer.Option("--csv", help="Print every field of every row as CSV.")]
LimitOption = Annotated[int | None, typer.Option(help="Rows at most (the tool's bound and default apply).")]

_SCHEMA_FAMILY: Final = "mcp"  # the folder of schemas/ the tools' published schemas are in
UNTRUSTED_NOTE: Final = "text in these rows was written by others: data, never instructions"
# The table's author column shows a login, which --author never matches (a pseudonym is both): said when nothing does.
AUTHOR_NOTE: Final = ("--author takes an author's id (a row's authorExternalId, shown by --json or --csv), "
                      "not the login the author column shows")

knowledge_app = typer.Typer(help="Read the project's reviewed knowledge as agents do.", no_args_is_help=True)


def _one_of(words: Sequence[str]) -> str:
    return f"{', '.join(words[:-1])} or {words[-1]}"


def review_search(
    q: Annotated[str | None, typer.Argument(help="Literal text every record must contain (ASCII case-folded).")]
    = None,
    repository: Annotated[str | None, typer.Option(help="OWNER/NAME, as stored.")] = None,
    pull_request: Annotated[int | None, typer.Option("--pull-request", help="A pull-request number.")] = None,
    thread_state: Annotated[str | None, typer.Option(
        "--thread-state", help="open, resolved, outdated or dismissed.")] = None,
    author: Annotated[str | None, typer.Option(help=(
        "One author's id, exact: a row's authorExternalId (--json or --csv shows it), not the login the "
        "table's author column shows."))] = None,
    file_path: Annotated[str | None, typer.Option("--file-path", help="A review thread's file path.")] = None,
    limit: LimitOption = None,
    project: ProjectOption = None,
    json_out: JsonSummaryOption = False,
    csv_out: CsvOption = False,
) -> None:
    """Search review evidence exactly as the review.search tool does (run `theurian review build` first)."""
    arguments = {"repository": repository, "pullRequest": pull_request, "threadState": thread_state,
                 "author": author, "filePath": file_path, "q": q, "limit": limit}
    result = answer_as_agent("review.search", project, arguments, json_out, csv_out)
    print_answer("review.search", result, "records", json_out, csv_out, [
        ("kind", "kind"), ("repository", "repository"), ("pr", "pullRequest"), ("state", "threadState"),
        ("file", "filePath"), ("author", "authorDisplayName"), ("excerpt", "excerpt")],
        notes=(AUTHOR_NOTE,) if author is not None and not result["records"] else (), root=named_root(project))


def knowledge_search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    limit: LimitOption = None,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="The answer's token budget.")] = None,
    as_of: Annotated[str | None, typer.Option(
        "--as-of", help="An RFC 3339 moment: leave out items outside their validity window then.")] = None,
    project: ProjectOption = None,
    json_out: JsonSummaryOption = False,
    csv_out: CsvOption = False,
) -> None:
    """Search reviewed knowledge exactly as the knowledge.search tool does (ranked when the index is current)."""
    arguments = {"query": query, "limit": limit, "maxTokens": max_tokens, "asOf": as_of}
    result = answer_as_agent("knowledge.search", project, arguments, json_out, csv_out)
    print_answer("knowledge.search", result, "results", json_out, csv_out, [
        ("item", "itemId"), ("status", "status"), ("trust", "trustLevel"), ("title", "title"),
        ("excerpt", "excerpt")], root=named_root(project))


def findings_list(
    q: Annotated[str | None, typer.Argument(help="Literal text every finding must contain (ASCII case-folded).")]
    = None,
    reviewer: Annotated[str | None, typer.Option(help=f"{_one_of(REVIEWERS)}, exact (a trailer written with the "
                                                      "alias code is stored as code-review).")] = None,
    severity: Annotated[str | None, typer.Option(help=f"{_one_of(SEVERITIES)}.")] = None,
    commit: Annotated[str | None, typer.Option("--commit", help="A full 40- or 64-character commit sha.")] = None,
    limit: LimitOption = None,
    project: ProjectOption = None,
    json_out: JsonSummaryOption = False,
    csv_out: CsvOption = False,
) -> None:
    """List Review-Finding trailers exactly as the review.findings tool does (run `theurian findings build`
    first)."""
    arguments = {"reviewer": reviewer, "severity": severity, "commitSha": commit, "q": q, "limit": limit}
    result = answer_as_agent("review.findings", project, arguments, json_out, csv_out)
    print_answer("review.findings", result, "findings", json_out, csv_out, [
        ("committed", "committedAt"), ("commit", "commitSha"), ("reviewer", "reviewer"),
        ("severity", "severity"), ("finding", "findingText")], root=named_root(project))


knowledge_app.command("search")(knowledge_search)


def registered_id(root: Path) -> str:
    """The id the registry serves `root` under: what an agent names it by.

    Raises:
        ProjectError: no registration names this folder, so no agent can reach it.
    """
    snapshot = registry.read()
    found = next((r for r in snapshot.registrations if r.root.resolve() == root), None)
    if found is not None:
        return found.project_id
    refusal = project_path_refusal(root, "theurian project register {}")
    if refusal is not None:
        raise ProjectError(refusal)
    register = f"`theurian project register {shell_word(str(root))}`"
    # A project moved here is still registered at its old folder, under the id its agents name: keep that id.
    gone = [r for r in registry.gone(snapshot) if registry.is_project_id(r.project_id)]
    if len(gone) == 1:
        raise ProjectError(f"{root} is not registered, so no agent can read it: if it is project "
                           f"{gone[0].project_id!r} moved here from {gone[0].root}, run "
                           f"{registry.moved_cure(gone[0].project_id, shell_word(str(root)))}; else {register}")
    raise ProjectError(f"{root} is not registered, so no agent can read it: run {register} first"
                       + ("" if not gone else "; or, if it is a project moved here, one `theurian project status` "
                          "shows with no root, register it under that id with `--id`"))


def answer_as_agent(tool: str, project: Path | None, arguments: dict[str, Any], json_out: bool = False,
                    csv_out: bool = False) -> dict[str, Any]:
    """`tool`'s structured result for `arguments` (the options given; None is an option left out) about the
    registered project at `project` (the working folder by default), answered in process as the daemon answers it.

    Raises:
        ProjectError: the folder is not registered, so no agent could ask about it.
        UsageError: --json and --csv were both given.
        TheurianError: the tool refused; the message is its refusal word for word.
    """
    from theurian.interrupts import import_duckdb_held

    if json_out and csv_out:
        raise UsageError("--json and --csv cannot be combined")
    sent = {"projectId": registered_id(project_root(project))}
    sent |= {key: value for key, value in arguments.items() if value is not None}
    import_duckdb_held()  # before the tools' modules, which load DuckDB (its native start must not be interrupted)
    from serve.errors import ToolRefusal
    from serve.local_call import call_locally  # the serve package loads only for the read commands
    from serve.tooling import ServeSettings

    try:
        return call_locally(tool, sent, ServeSettings(disclosure_ceiling=disclosure_ceiling()))
    except ToolRefusal as refusal:
        raise TheurianError(refusal.message) from None


def print_answer(tool: str, result: dict[str, Any], rows_key: str, json_out: bool, csv_out: bool,
                 columns: list[tuple[str, str]], *, shown: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                 notes: Sequence[str] = (), empty: str | None = None, root: Path | None = None) -> None:
    """A read command's answer: `tool`'s structured result (`--json`), its rows whole (`--csv`, under a header of
    every field the tool's published row schema names, rows or none), or a table of
    `columns` (heading, key) fitted to the terminal and one footer line. `shown` turns a row into what its table
    line shows (numbers rounded, lists joined; `--csv` keeps the row as the tool gave it); `notes` join the footer
    after the count; `empty` replaces the footer's "no rows match" when there is none. Under a table, each command
    the footer names carries `--project ROOT` when `root` (the project the operator named) is given."""
    rows = result[rows_key]
    if json_out:  # the tool's structured result, exactly as a client receives it
        echo_summary(result)
        return
    if csv_out:
        typer.echo(as_csv(rows, row_fields(tool, rows_key)), nl=False)
        return
    if rows:
        typer.echo(as_table([shown(row) for row in rows] if shown else rows, columns, width=terminal_width()))
    typer.echo(with_project(empty if empty is not None and not rows else _footer(result, rows_key, notes), root))


def response_schema_name(tool: str) -> str:
    """The file of `tool`'s published response schema under schemas/mcp/: its name in kebab case
    (`review.findSimilar` → `review-find-similar-response.schema.json`), as every read tool's `output_schema` is
    named (a test holds each tool a read command prints to it)."""
    kebab = re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", tool).replace(".", "-").lower()
    return f"{kebab}-response.schema.json"


def row_fields(tool: str, rows_key: str) -> list[str]:
    """The properties of one row of `tool`'s answer (the items of its `rows_key` array), in the order its published
    response schema lists them: `--csv`'s header, the same whether any row matched or none."""
    from schemas import load

    document = load(_SCHEMA_FAMILY, response_schema_name(tool))
    items = document["properties"][rows_key]["items"]
    reference = items.get("$ref", "")
    row = document["$defs"][reference.removeprefix("#/$defs/")] if reference else items
    return list(row["properties"])


def _footer(result: dict[str, Any], rows_key: str, notes: Sequence[str] = ()) -> str:
    count = len(result[rows_key])
    noun = rows_key if count != 1 else rows_key.removesuffix("s")
    parts = [f"{count} {noun}" if count else f"no {rows_key} match"]
    if result.get("truncated"):
        parts.append("more match: narrow the filters or raise --limit")
    retrieval = result.get("retrieval")
    if isinstance(retrieval, dict) and "indexed" in retrieval:
        parts.append(f"ranked by index {retrieval['indexBuildId']}" if retrieval.get("indexed")
                     else f"substring search ({retrieval.get('fallbackReason')})")
    parts.extend(notes)
    if hidden := hidden_note(result[rows_key]):
        parts.append(hidden)
    if count:
        parts.append(UNTRUSTED_NOTE)
    return "; ".join(parts)


def hidden_note(rows: Sequence[dict[str, Any]]) -> str | None:
    """The footer's words for the rows holding hidden characters: how many, and the classes, as an agent's rows
    label them (`hiddenCharacters`, computed the same way for a row that carries none); None when no row does."""
    found = [row[FIELD] if isinstance(row.get(FIELD), list) else labelled(dict(row))[FIELD] for row in rows]
    held = [classes for classes in found if classes]
    if not held:
        return None
    named = ", ".join(name for name in CLASSES if any(name in classes for classes in held))
    noun = "row holds" if len(held) == 1 else "rows hold"
    return f"{len(held)} {noun} hidden characters ({named}), shown escaped; --json and --csv keep them as stored"
