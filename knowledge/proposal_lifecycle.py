"""What a person does with a proposal at the CLI: list, accept, reject. No tool can reach this module.

Accepting moves the migration into `.theurian/migrations/` and each body into `.theurian/knowledge/`, after
validating the migration again and checking every body against the hash the migration records (the files may
have been edited since they were drafted). Nothing is ever replaced: a destination that exists refuses the
accept, and a proposal whose migration is already in place is reported as accepted (exit 4), naming it.
`evidence.json` stays in the proposal directory as the record of why.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from knowledge.errors import KnowledgeError
from knowledge.migration_yaml import read_yaml
from knowledge.migrations import (
    CONTENT_PREFIX,
    FILE_NAME,
    KNOWLEDGE_DIR,
    MIGRATIONS_DIR,
    sha256_checksum,
    validate_document,
)
from knowledge.proposal_files import (
    EVIDENCE_NAME,
    PROPOSAL_ID,
    PROPOSALS_DIR,
    existing_folder,
    move_new,
    own_folder,
)
from theurian.containment import resolve_inside
from theurian.errors import AlreadyInPlaceError

PENDING: Final = "pending"
MAX_SHOWN: Final = 80
ACCEPTED: Final = "accepted"
DAMAGED: Final = "damaged"


class ProposalError(KnowledgeError):
    """A proposal cannot be found, read, accepted or rejected as asked."""


@dataclass(frozen=True)
class ProposalSummary:
    proposal_id: str
    status: str  # pending | accepted | damaged
    migration_file: str | None
    drafted_by: str | None
    description: str | None


@dataclass(frozen=True)
class Accepted:
    migration: str  # project-relative
    bodies: tuple[str, ...]


def list_proposals(root: Path) -> list[ProposalSummary]:
    """Every proposal directory, oldest first (ULID order)."""
    parent = own_folder(root, PROPOSALS_DIR)
    if not parent.is_dir():
        return []
    summaries = []
    for entry in sorted(parent.iterdir()):
        if entry.is_dir() and PROPOSAL_ID.fullmatch(entry.name):
            summaries.append(_summary(root, entry))
    return summaries


def accept_proposal(root: Path, proposal_id: str) -> Accepted:
    """Move the proposal's migration and bodies into place.

    Raises:
        AlreadyInPlaceError: the proposal was already accepted (exit 4), naming its migration.
        ProposalError: no such proposal, a damaged one, or a destination that already exists.
    """
    folder = _folder(root, proposal_id)
    trail = _trail(folder, proposal_id)
    file_name = trail["migrationFile"]
    source = resolve_inside(folder, file_name)
    # Accepted files land only in the real folders: a redirected one would put them where no apply reads them.
    knowledge = own_folder(root, KNOWLEDGE_DIR)
    destination = resolve_inside(own_folder(root, MIGRATIONS_DIR), file_name)
    if not source.is_file():
        if destination.is_file():
            raise AlreadyInPlaceError(f"proposal {proposal_id} was already accepted: {MIGRATIONS_DIR}/{file_name}")
        raise ProposalError(f"proposal {proposal_id} has lost its migration {file_name}; reject it and draft again")
    _check_drafted_bytes(proposal_id, trail, source)
    moves = [(resolve_inside(folder, f"knowledge/{rel}"), resolve_inside(knowledge, rel))
             for rel in _checked_bodies(folder, proposal_id, source)]
    for _, target in [*moves, (source, destination)]:
        if target.exists():
            raise ProposalError(
                f"proposal {proposal_id} was not accepted: {target.relative_to(root.resolve()).as_posix()} "
                "already exists and is never replaced; nothing was moved"
            )
    for body, target in moves:
        move_new(body, target)
    move_new(source, destination)  # last: a migration never lands without its bodies
    return Accepted(f"{MIGRATIONS_DIR}/{file_name}", tuple(f"{KNOWLEDGE_DIR}/{_rel(folder, b)}" for b, _ in moves))


def reject_proposal(root: Path, proposal_id: str) -> str:
    """Remove a pending proposal's directory; returns it (project-relative).

    Raises:
        ProposalError: no such proposal, or it was accepted (its migration is under review or applied).
    """
    folder = _folder(root, proposal_id)
    if _summary(root, folder).status == ACCEPTED:
        raise ProposalError(
            f"proposal {proposal_id} was already accepted; remove its migration from {MIGRATIONS_DIR}/ before "
            "it is applied, or write a new migration that undoes it"
        )
    shutil.rmtree(folder)
    return f"{PROPOSALS_DIR}/{proposal_id}"


def _folder(root: Path, proposal_id: str) -> Path:
    folder = existing_folder(root, proposal_id)
    if folder is None:
        shown = proposal_id if PROPOSAL_ID.fullmatch(proposal_id) else "that id"
        raise ProposalError(f"there is no proposal {shown} under {PROPOSALS_DIR}/ (`theurian propose list`)")
    return folder


def _trail(folder: Path, proposal_id: str) -> dict[str, Any]:
    try:
        trail = orjson.loads(resolve_inside(folder, EVIDENCE_NAME).read_bytes())
        file_name = trail["migrationFile"]
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise ProposalError(f"proposal {proposal_id} has no readable {EVIDENCE_NAME}; reject it") from exc
    if not isinstance(file_name, str) or not FILE_NAME.match(file_name):
        # Accept installs exactly this name under .theurian/migrations/, where a misnamed file stops every apply.
        shown = repr(file_name[:MAX_SHOWN]) if isinstance(file_name, str) else "a value that is no file name"
        raise ProposalError(
            f"proposal {proposal_id}'s {EVIDENCE_NAME} names {shown}, which is not a migration file name "
            "(<ULID>-<slug>.yaml); nothing was moved. Reject it and draft again."
        )
    return dict(trail)


def _check_drafted_bytes(proposal_id: str, trail: dict[str, Any], source: Path) -> None:
    """The migration still hashes to what evidence.json recorded when it was drafted."""
    recorded = trail.get("migrationSha256")
    if recorded != sha256_checksum(source.read_bytes()):
        why = "was edited since it was drafted" if recorded else f"has no migrationSha256 in its {EVIDENCE_NAME}"
        raise ProposalError(
            f"proposal {proposal_id} was not accepted: its migration {source.name} {why} (the migrationSha256 "
            f"recorded at draft time does not match); nothing was moved. Reject it and draft again."
        )


def _checked_bodies(folder: Path, proposal_id: str, source: Path) -> list[str]:
    """The body paths (under knowledge/) the migration names, each present and hashing as recorded."""
    try:
        # The loader apply uses: a proposal that apply would refuse (an alias bomb, a key twice) is refused here.
        document = read_yaml(source.name, source.read_bytes())
        validate_document(source.name, document)
    except KnowledgeError as exc:
        raise ProposalError(f"proposal {proposal_id} was not accepted: {exc.message}") from exc
    name_id = source.name.split("-", 1)[0]
    if document["id"] != name_id:
        raise ProposalError(
            f"proposal {proposal_id} was not accepted: {source.name} starts with {name_id} but the document's id "
            f"is {document['id']}; nothing was moved"
        )
    bodies = []
    for op in document["operations"]:
        if op["op"] != "upsertRevision":
            continue
        relative = str(op["contentFile"]).removeprefix(CONTENT_PREFIX)
        path = resolve_inside(folder, f"knowledge/{relative}")
        if not path.is_file() or sha256_checksum(path.read_bytes()) != op["contentSha256"]:
            raise ProposalError(
                f"proposal {proposal_id} was not accepted: its body knowledge/{relative} is missing or no longer "
                "hashes to the contentSha256 its migration records; nothing was moved"
            )
        bodies.append(relative)
    return bodies


def _summary(root: Path, folder: Path) -> ProposalSummary:
    try:
        trail = _trail(folder, folder.name)
    except ProposalError:
        return ProposalSummary(folder.name, DAMAGED, None, None, None)
    file_name = trail["migrationFile"]
    if resolve_inside(folder, file_name).is_file():
        status = PENDING
    elif resolve_inside(root, f"{MIGRATIONS_DIR}/{file_name}").is_file():
        status = ACCEPTED
    else:
        status = DAMAGED
    return ProposalSummary(folder.name, status, file_name, trail.get("draftedBy"), trail.get("description"))


def _rel(folder: Path, body: Path) -> str:
    return body.relative_to(folder / "knowledge").as_posix()
