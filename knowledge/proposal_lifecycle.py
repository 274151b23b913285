"""What a person does with a proposal at the CLI: list, accept, reject. No tool can reach this module.

Accepting moves the migration into `.theurian/migrations/` and each body into `.theurian/knowledge/`, after
validating the migration again and checking every body against the hash the migration records (the files may
have been edited since they were drafted). Nothing is ever replaced: a destination that exists refuses the
accept, and a proposal whose migration is already in place is reported as accepted (exit 4), naming it.
`evidence.json` stays in the proposal directory as the record of why.

A move is a hard link into place, the proposal's own name removed only once every link is made, the bodies
first and the migration last: the migration's link is the moment of acceptance. An accept stopped before it (a
Ctrl-C, a full disk) leaves the proposal pending with some bodies linked in, each the very file the proposal
holds; accepting again finishes the job, and rejecting removes those links with the proposal. One stopped after
it has accepted; accepting again tidies what it left in the proposal's folder and reports it accepted (exit 4).
An accept and a reject of the same project's proposals never interleave: each holds `.theurian/proposals`.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from knowledge.errors import FolderRedirectedError, NotAFolderError, ProposalError, SourceUnreadable
from knowledge.migrations import FILE_NAME, read_source
from knowledge.proposal_checks import check_drafted_bytes, checked_bodies, own_body, refuse_proposal_secrets, rehearse
from knowledge.proposal_files import EVIDENCE_NAME, PROPOSAL_ID, existing_folder, link_new, own_folder, same_file
from theurian.containment import resolve_inside
from theurian.durable import fsync_directory
from theurian.errors import AlreadyInPlaceError, PathEscapeError
from theurian.folder_lock import folder_held
from theurian.project import KNOWLEDGE_DIR, MIGRATIONS_DIR, PROPOSALS_DIR
from theurian.text import quoted

PENDING: Final = "pending"
# evidence.json: the gate's signals, the anchors and the reasoning of one draft; a few kilobytes.
MAX_TRAIL_BYTES: Final = 16 * 1024 * 1024
ACCEPTED: Final = "accepted"
DAMAGED: Final = "damaged"


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
    """Move the proposal's migration and bodies into place, or finish an accept that was stopped part-way.

    Raises:
        AlreadyInPlaceError: the proposal was already accepted (exit 4), naming its migration; what an accept
            stopped after the moment of acceptance left in the proposal's folder is tidied first.
        ProposalError: no such proposal, a damaged one, or a destination that already exists.
    """
    with _proposals_held(root):
        folder = _folder(root, proposal_id)
        trail = _trail(folder, proposal_id)
        file_name = trail["migrationFile"]
        source = resolve_inside(folder, file_name)
        # Accepted files land only in the real folders: a redirected one would put them where no apply reads them.
        knowledge = own_folder(root, KNOWLEDGE_DIR)
        destination = resolve_inside(own_folder(root, MIGRATIONS_DIR), file_name)
        if destination.is_file() and (not source.exists() or same_file(source, destination)):
            _tidy(root, folder, source, destination)
            raise AlreadyInPlaceError(f"proposal {proposal_id} was already accepted: {MIGRATIONS_DIR}/{file_name}")
        if not source.is_file():
            raise ProposalError(
                f"proposal {proposal_id} has lost its migration {file_name}; reject it and draft again"
            )
        check_drafted_bytes(proposal_id, trail, source)
        moves = [(own_body(folder, proposal_id, rel), resolve_inside(knowledge, rel))
                 for rel in checked_bodies(folder, proposal_id, source)]
        everything = [*moves, (source, destination)]  # the migration last: it never lands without its bodies
        for own, target in everything:
            if target.exists() and not same_file(own, target):
                raise ProposalError(
                    f"proposal {proposal_id} was not accepted: {target.relative_to(root.resolve()).as_posix()} "
                    "already exists and is never replaced; nothing was moved"
                )
        refuse_proposal_secrets(root, proposal_id, everything)
        rehearse(root, proposal_id, folder, source)
        for own, target in everything:
            if not same_file(own, target):  # one an accept stopped part-way already linked is in place
                link_new(own, target)
        # Accepted from here: what follows only tidies the proposal's own names (a stop leaves that to the next
        # accept, which reports the proposal accepted).
        _tidy(root, folder, source, destination)
    return Accepted(f"{MIGRATIONS_DIR}/{file_name}", tuple(f"{KNOWLEDGE_DIR}/{_rel(folder, b)}" for b, _ in moves))


def _tidy(root: Path, folder: Path, source: Path, destination: Path) -> None:
    """Remove the proposal's own names of what is now in place: the migration's, then each body's that is the
    very file under `.theurian/knowledge/`."""
    if same_file(source, destination):
        source.unlink()
    for own, placed in _linked_bodies(root, folder):
        if same_file(own, placed):
            own.unlink()
    fsync_directory(folder)


@contextmanager
def _proposals_held(root: Path) -> Iterator[None]:
    """An exclusive `flock` on `.theurian/proposals` for one accept or reject: a reject deciding "pending" while
    an accept links the migration in would otherwise remove a body the landed migration needs."""
    folder = own_folder(root, PROPOSALS_DIR)
    if not folder.is_dir():
        yield  # no proposal to accept or reject: `_folder` says so
        return
    with folder_held(folder):
        yield


def reject_proposal(root: Path, proposal_id: str) -> str:
    """Remove a pending proposal's directory, and any body an accept stopped part-way had linked into
    `.theurian/knowledge/` (only a link to the proposal's own file); returns the directory (project-relative).

    Raises:
        ProposalError: no such proposal, or it was accepted (its migration is under review or applied).
    """
    with _proposals_held(root):
        folder = _folder(root, proposal_id)
        if _summary(root, folder).status == ACCEPTED:
            raise ProposalError(
                f"proposal {proposal_id} was already accepted; remove its migration from {MIGRATIONS_DIR}/ before "
                "it is applied, or write a new migration that undoes it"
            )
        for own, placed in _linked_bodies(root, folder):
            if same_file(own, placed):
                placed.unlink()
        shutil.rmtree(folder)
    return f"{PROPOSALS_DIR}/{proposal_id}"


def _linked_bodies(root: Path, folder: Path) -> list[tuple[Path, Path]]:
    """Each body file the proposal holds and the place under `.theurian/knowledge/` an accept links it to."""
    own_bodies = folder / "knowledge"
    if not own_bodies.is_dir() or own_bodies.is_symlink():
        return []
    try:
        knowledge = own_folder(root, KNOWLEDGE_DIR)
    except (FolderRedirectedError, NotAFolderError):
        return []  # no accept could have linked anything through it: it refuses a redirected folder
    pairs = []
    for path in sorted(own_bodies.rglob("*")):
        if path.is_file() and not path.is_symlink():
            pairs.append((path, knowledge / path.relative_to(own_bodies)))
    return pairs


def _folder(root: Path, proposal_id: str) -> Path:
    folder = existing_folder(root, proposal_id)
    if folder is None:
        raise ProposalError(f"there is no proposal {quoted(proposal_id)} under {PROPOSALS_DIR}/ "
                            "(`theurian propose list`)")
    return folder


def _trail(folder: Path, proposal_id: str) -> dict[str, Any]:
    try:
        # A link out of the folder, a FIFO or a runaway file is no readable trail: the proposal is damaged, and
        # list, accept and reject say so of it alone.
        trail = orjson.loads(read_source(resolve_inside(folder, EVIDENCE_NAME), MAX_TRAIL_BYTES))
        file_name = trail["migrationFile"]
    except (PathEscapeError, SourceUnreadable, OSError, orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise ProposalError(f"proposal {proposal_id} has no readable {EVIDENCE_NAME}; reject it") from exc
    if not isinstance(file_name, str) or not FILE_NAME.match(file_name):
        # Accept installs exactly this name under .theurian/migrations/, where a misnamed file stops every apply.
        shown = quoted(file_name) if isinstance(file_name, str) else "a value that is no file name"
        raise ProposalError(
            f"proposal {proposal_id}'s {EVIDENCE_NAME} names {shown}, which is not a migration file name "
            "(<ULID>-<slug>.yaml); nothing was moved. Reject it and draft again."
        )
    return dict(trail)


def _summary(root: Path, folder: Path) -> ProposalSummary:
    try:
        trail = _trail(folder, folder.name)
    except ProposalError:
        return ProposalSummary(folder.name, DAMAGED, None, None, None)
    file_name = trail["migrationFile"]
    try:
        own = resolve_inside(folder, file_name)
        placed = resolve_inside(root, f"{MIGRATIONS_DIR}/{file_name}")
    except PathEscapeError:  # a link out where the migration should be: this proposal is damaged, not the list
        return ProposalSummary(folder.name, DAMAGED, file_name, trail.get("draftedBy"), trail.get("description"))
    if own.is_file() and not same_file(own, placed):
        status = PENDING
    elif placed.is_file():
        status = ACCEPTED  # an accept stopped just after linking the migration in has accepted all the same
    else:
        status = DAMAGED
    return ProposalSummary(folder.name, status, file_name, trail.get("draftedBy"), trail.get("description"))


def _rel(folder: Path, body: Path) -> str:
    return body.relative_to(folder / "knowledge").as_posix()
