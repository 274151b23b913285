"""`theurian propose change | migration | candidate | list | accept | reject`: proposals at the command line.

The three drafting commands run the same code as the three write-intent tools and print the same payload
(`--json`). `accept` is the step no tool can take: it moves the migration into `.theurian/migrations/` and the
body into `.theurian/knowledge/`, where a human commits them for review. Heavy modules (DuckDB, jsonschema,
YAML) are imported inside each command, so `theurian --version` never pays for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Final

import typer

from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.pasteable import named_root, with_project
from theurian.cli.project_option import ProjectOption, path_value, project_root
from theurian.cli.read_output import visible
from theurian.errors import UsageError
from theurian.project import Project
from theurian.text import shell_word

app = typer.Typer(
    help="Draft knowledge proposals (.theurian/proposals/), list them, accept or reject them.",
    no_args_is_help=True,
)

AuthorOption = Annotated[str, typer.Option("--author", help="Who proposes it.")]
DescriptionOption = Annotated[str | None, typer.Option("--description", help="Why, for the reviewer.")]
# The tools each drafting command shares its payload with own the bound of a body: their input schemas.
_CHANGE_SCHEMA = "knowledge-propose-change-input.schema.json"
_CANDIDATE_SCHEMA = "review-generate-knowledge-candidate-input.schema.json"
BodyOption = Annotated[Path, typer.Option("--body-file", help="A UTF-8 file holding the body (Markdown).",
                                          parser=path_value)]
# The words `candidate_line` leaves for the operator to fill in, and what each stands for. A value still its word is
# refused (`_unfilled`), so a line pasted before it is filled in drafts nothing and names what is left to fill.
CANDIDATE_PLACEHOLDERS: Final = {
    "--fix-commit": ("FIX_SHA", "the full sha of the commit that fixed what the concern raised, in a member "
                                "thread's file"),
    "--item-id": ("ITEM_ID", "the new item's id"),
    "--title": ("TITLE", "the rule's title, in quotes"),
    "--body-file": ("BODY_FILE", "a Markdown file holding the rule"),
    "--kind": ("KIND", "one of: {kinds}"),
    "--category": ("CATEGORY", "one of: {categories}"),
    "--owner": ("OWNER", "who owns the item"),
    "--author": ("AUTHOR", "who proposes it"),
}


def _project(option: Path | None) -> Project:
    from theurian.registry import default_project_id

    root = project_root(option)
    return Project(default_project_id(root) or "project", root)


def _read_body(path: Path, tool: str, schema: str) -> str:
    """The body a `--body-file` holds, within the bound `tool` (drafting the same proposal) admits for `body`.

    Raises:
        UsageError: not a regular file, past the bound, or not UTF-8 (read no further than the bound allows).
    """
    from schemas import load

    limit: int = load("mcp", schema)["properties"]["body"]["maxLength"]  # characters, as JSON Schema counts
    past = f"holds more than {limit} characters, the longest body {tool} admits"
    # A UTF-8 character is at most four bytes: a file past 4 × the bound holds more characters than it, unread.
    text = _read_text(path, "--body-file", 4 * limit, past)
    if len(text) > limit:
        raise UsageError(f"--body-file {path} {past}")
    return text


def _read_text(path: Path, what: str, max_bytes: int, past: str) -> str:
    """The UTF-8 text of the regular file at `path` (a link followed), opened without waiting on a FIFO or a
    device and never read past `max_bytes`; `past` completes the refusal of a larger one.

    Raises:
        UsageError: the file is missing, not a regular file, larger than `max_bytes`, unreadable or not UTF-8.
    """
    from knowledge.errors import SourceUnreadable
    from knowledge.migrations import read_source

    try:
        data = read_source(path.resolve(), max_bytes)  # the operator's own path: a link to a file is that file
    except FileNotFoundError:
        raise UsageError(f"{what} {path} does not exist") from None
    except SourceUnreadable as exc:
        detail = past if exc.too_large else f"cannot be read: the file is {exc.reason}"
        raise UsageError(f"{what} {path} {detail}") from None
    except OSError as exc:
        raise UsageError(f"{what} {path} cannot be read ({exc.strerror or type(exc).__name__})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} {path} is not UTF-8 text (byte {exc.start})") from None


def candidate_line(concern_id: str, root: Path) -> list[str]:
    """The `propose candidate` command that drafts `concern_id` in the project at `root`, each word a shell reads
    back as written, and the line saying what each CAPITAL word left in it stands for: what a listing of concerns
    prints as its next step (the caller authors the rule, so only the concern and the project are filled in)."""
    from knowledge.candidate import CATEGORIES
    from knowledge.vocabulary import ITEM_KINDS

    words = ["theurian", "propose", "candidate", "--concern", shell_word(concern_id), "--project",
             shell_word(str(root))]
    for option, (word, _) in CANDIDATE_PLACEHOLDERS.items():
        words += [option, word]
    meant = "; ".join(f"{word} {what.format(kinds=', '.join(ITEM_KINDS), categories=', '.join(CATEGORIES))}"
                      for word, what in CANDIDATE_PLACEHOLDERS.values())
    return [" ".join(words), f"fill in each CAPITAL word first: {meant}"]


def _unfilled(given: dict[str, str]) -> None:
    """Refuse options still holding the placeholder `candidate_line` printed for them.

    Raises:
        UsageError: naming each, and where the words came from.
    """
    left = [f"{option} {given[option]}" for option, (word, _) in CANDIDATE_PLACEHOLDERS.items()
            if given.get(option) == word]
    if left:
        raise UsageError(f"fill in {', '.join(left)} first: each is a placeholder from the line `theurian review "
                         "concerns` printed (what each stands for is on the line after it); nothing was drafted")


def _here(step: str, option: Path | None) -> str:
    """A next step as the operator who named `--project` pastes it (`pasteable.with_project`): the steps are the
    tools' payload, written for a caller in the project; `--json` keeps them so."""
    return with_project(step, named_root(option))


def _emit(payload: dict[str, Any], as_json: bool, option: Path | None) -> None:
    if as_json:
        echo_summary(payload)
        return
    typer.echo(f"drafted proposal {payload['proposalId']} in {payload['proposalDirectory']}/")
    typer.echo(f"  migration {payload['migrationFile']}")
    if payload["bodyFile"]:
        typer.echo(f"  body      {payload['bodyFile']} -> {payload['bodyDestination']}")
    typer.echo(f"  evidence  {payload['evidenceFile']}")
    for step in payload["nextSteps"]:
        typer.echo(f"next: {_here(step, option)}")


@app.command("change")
def change(
    item_id: Annotated[str, typer.Argument(help="The existing item's id.")],
    expected_revision: Annotated[str, typer.Option("--expected-revision",
                                                   help="The item's current revision id (REVISION_CONFLICT else).")],
    body_file: BodyOption,
    author: AuthorOption,
    title: Annotated[str | None, typer.Option("--title", help="A new title; default: keep the current one.")] = None,
    description: DescriptionOption = None,
    project: ProjectOption = None,
    as_json: JsonSummaryOption = False,
) -> None:
    """Draft a new revision of an existing item (what knowledge.proposeChange drafts)."""
    from knowledge.drafts import ChangeRequest, propose_change
    from knowledge.proposals import DraftFacade
    from theurian.installation import disclosure_ceiling

    where = _project(project)
    request = ChangeRequest(item_id=item_id, expected_revision=expected_revision,
                            body=_read_body(body_file, "knowledge.proposeChange", _CHANGE_SCHEMA), author=author,
                            title=title,
                            description=description, drafted_by="theurian propose change")
    _emit(propose_change(where, disclosure_ceiling(), DraftFacade(where.root), request), as_json, project)


@app.command("migration")
def migration(
    operations_file: Annotated[Path, typer.Option("--operations-file",
                                                  help="A YAML or JSON list of operations (ten kinds admitted).",
                                                  parser=path_value)],
    author: AuthorOption,
    description: Annotated[str, typer.Option("--description", help="What the migration does, for the reviewer.")],
    project: ProjectOption = None,
    as_json: JsonSummaryOption = False,
) -> None:
    """Draft a migration of the ten v1 draft kinds (what knowledge.generateMigrationDraft drafts)."""
    from knowledge.drafts import generate_migration_draft
    from knowledge.errors import MigrationInvalidError
    from knowledge.migration_yaml import read_yaml
    from knowledge.migrations import MAX_MIGRATION_BYTES
    from knowledge.proposals import DraftFacade

    try:
        # The strict loader migrations use: no anchors or aliases, no key written twice.
        text = _read_text(operations_file, "--operations-file", MAX_MIGRATION_BYTES,
                          f"is larger than {MAX_MIGRATION_BYTES} bytes, the bound of the migration it would become")
        operations = read_yaml(str(operations_file), text.encode())
    except MigrationInvalidError as exc:
        raise UsageError(f"--operations-file: {exc.message}") from exc
    if not isinstance(operations, list) or not operations or not all(isinstance(op, dict) for op in operations):
        raise UsageError(f"--operations-file {operations_file} must hold a non-empty list of operations (mappings)")
    payload = generate_migration_draft(DraftFacade(_project(project).root), author=author, description=description,
                                       operations=operations, drafted_by="theurian propose migration")
    _emit(payload, as_json, project)


@app.command("candidate")
def candidate(
    fix_commit: Annotated[str, typer.Option("--fix-commit", help="Full sha of the commit that fixed it.")],
    item_id: Annotated[str, typer.Option("--item-id", help="The new item's id.")],
    title: Annotated[str, typer.Option("--title", help="The generalization's title.")],
    body_file: BodyOption,
    kind: Annotated[str, typer.Option("--kind", help="An item kind (architecture, decision, …).")],
    category: Annotated[str, typer.Option("--category", help="A ReviewCommentCategory (reliability-rule, …).")],
    owner: Annotated[str, typer.Option("--owner", help="Who owns the item.")],
    author: AuthorOption,
    repository: Annotated[str | None, typer.Option(
        "--repository", help="owner/name as review.search publishes it (with --record-key).")] = None,
    record_key: Annotated[str | None, typer.Option(
        "--record-key", help="The thread's recordKey from review.search (with --repository).")] = None,
    concern: Annotated[str | None, typer.Option(
        "--concern", help="A concern id from `theurian review concerns`, instead of a thread.")] = None,
    description: DescriptionOption = None,
    evidence: Annotated[list[str] | None, typer.Option("--evidence", help="A reasoning step; repeatable.")] = None,
    project: ProjectOption = None,
    as_json: JsonSummaryOption = False,
) -> None:
    """Promote a stored review thread, or a recurring concern, into a knowledge candidate (what
    review.generateKnowledgeCandidate does)."""
    from theurian.interrupts import import_duckdb_held

    import_duckdb_held()  # the candidate reads its threads from the review store
    from knowledge.candidate import CATEGORIES, CandidateRequest
    from serve.tools.review_candidate import draft_candidate
    from theurian.installation import disclosure_ceiling

    _unfilled({"--fix-commit": fix_commit, "--item-id": item_id, "--title": title, "--body-file": str(body_file),
               "--kind": kind, "--category": category, "--owner": owner, "--author": author})
    if category not in CATEGORIES:
        raise UsageError(f"--category must be one of: {', '.join(CATEGORIES)}")
    if (repository is not None or record_key is not None) == (concern is not None):
        raise UsageError("name exactly one source: --repository with --record-key (a thread), or --concern ID")
    if concern is None and (repository is None or record_key is None):
        raise UsageError("--repository and --record-key name a thread together: give both")
    where = _project(project)
    request = CandidateRequest(
        fix_commit=fix_commit, item_id=item_id, title=title, kind=kind,
        body=_read_body(body_file, "review.generateKnowledgeCandidate", _CANDIDATE_SCHEMA),
        category=category, owner=owner, author=author, drafted_by="theurian propose candidate",
        repository=repository, record_key=record_key, concern_id=concern, description=description,
        evidence_trail=tuple(evidence or ()),
    )
    _emit(draft_candidate(where, disclosure_ceiling(), request), as_json, project)


@app.command("list")
def list_command(project: ProjectOption = None, as_json: JsonSummaryOption = False) -> None:
    """List the proposals under .theurian/proposals/ with their status (pending, accepted, damaged)."""
    from knowledge.proposal_lifecycle import list_proposals

    summaries = list_proposals(_project(project).root)
    if as_json:
        echo_summary({"proposals": [{"proposalId": s.proposal_id, "status": s.status,
                                     "migrationFile": s.migration_file, "draftedBy": s.drafted_by,
                                     "description": s.description} for s in summaries]})
        return
    if not summaries:
        typer.echo("no proposals (draft one with `theurian propose change|migration|candidate` or an MCP tool)")
    for s in summaries:
        # The file name and the trail's draftedBy are read from a folder a clone can carry: shown as table cells.
        typer.echo(f"{s.proposal_id}\t{s.status}\t{visible(s.migration_file or '-')}\t{visible(s.drafted_by or '-')}")


@app.command("accept")
def accept(proposal_id: Annotated[str, typer.Argument(help="The proposal's id.")],
           project: ProjectOption = None, as_json: JsonSummaryOption = False) -> None:
    """Move the proposal's migration into .theurian/migrations/ and its body into .theurian/knowledge/.

    Exits 4, naming the migration, when the proposal was already accepted. Nothing is ever replaced. Then commit
    the files for review, and after the merge run `theurian migrate apply`.
    """
    from knowledge.proposal_lifecycle import accept_proposal

    accepted = accept_proposal(_project(project).root, proposal_id)
    if as_json:
        echo_summary({
            "proposalId": proposal_id, "migrationFile": str(accepted.migration),
            "bodyFiles": [str(body) for body in accepted.bodies],
            "nextSteps": ["commit these files and open a pull request", "after the merge: theurian migrate apply"]})
        return
    typer.echo(f"accepted {proposal_id}: {accepted.migration}")
    for body in accepted.bodies:
        typer.echo(f"  body {body}")
    typer.echo(_here("next: commit these files and open a pull request; after the merge run `theurian migrate apply`",
                     project))


@app.command("reject")
def reject(proposal_id: Annotated[str, typer.Argument(help="The proposal's id.")],
           project: ProjectOption = None, as_json: JsonSummaryOption = False) -> None:
    """Remove a pending proposal's directory (an accepted one is refused: undo it with a migration)."""
    from knowledge.proposal_lifecycle import reject_proposal

    removed = reject_proposal(_project(project).root, proposal_id)
    if as_json:
        echo_summary({"proposalId": proposal_id, "removed": f"{removed}/"})
        return
    typer.echo(f"rejected {proposal_id}: removed {removed}/")
