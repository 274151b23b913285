"""What an accept checks of a proposal before anything moves (`knowledge.proposal_lifecycle` moves it).

Every check reads the proposal's own files as every knowledge source is read (bounded, regular files only,
`migrations.read_source`), and each refusal is a ProposalError saying that nothing was moved: the migration still
hashes as drafted and validates as apply would read it, every body it names is inside the proposal's folder and
hashes as recorded, no text holds a secret, and `migrate apply` would accept the migrations with it in place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from knowledge.errors import KnowledgeError, ProposalError, SourceUnreadable
from knowledge.migration_yaml import read_yaml
from knowledge.migrations import (
    CONTENT_PREFIX,
    MAX_BODY_BYTES,
    MAX_MIGRATION_BYTES,
    read_migration,
    read_source,
    sha256_checksum,
    validate_document,
)
from knowledge.proposal_files import EVIDENCE_NAME, relative_to_root
from knowledge.rehearsal import rehearse_with
from knowledge.secret_gate import refuse_secrets
from theurian.containment import resolve_inside
from theurian.errors import PathEscapeError
from theurian.project import PROPOSALS_DIR


def check_drafted_bytes(proposal_id: str, trail: dict[str, Any], source: Path) -> None:
    """The migration still hashes to what evidence.json recorded when it was drafted."""
    recorded = trail.get("migrationSha256")
    if recorded != sha256_checksum(_read_own(proposal_id, source, MAX_MIGRATION_BYTES)):
        why = "was edited since it was drafted" if recorded else f"has no migrationSha256 in its {EVIDENCE_NAME}"
        raise ProposalError(
            f"proposal {proposal_id} was not accepted: its migration {source.name} {why} (the migrationSha256 "
            f"recorded at draft time does not match); nothing was moved. Reject it and draft again."
        )


def checked_bodies(folder: Path, proposal_id: str, source: Path) -> list[str]:
    """The body paths (under knowledge/) the migration names, each present and hashing as recorded."""
    try:
        # The loader apply uses: a proposal that apply would refuse (an alias bomb, a key twice) is refused here.
        document = read_yaml(source.name, _read_own(proposal_id, source, MAX_MIGRATION_BYTES))
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
        path = own_body(folder, proposal_id, relative)
        if not path.is_file() or sha256_checksum(_read_own(proposal_id, path, MAX_BODY_BYTES)) != op["contentSha256"]:
            raise ProposalError(
                f"proposal {proposal_id} was not accepted: its body knowledge/{relative} is missing or no longer "
                "hashes to the contentSha256 its migration records; nothing was moved"
            )
        bodies.append(relative)
    return bodies


def own_body(folder: Path, proposal_id: str, relative: str) -> Path:
    """A body under the proposal's own `knowledge/`, named as the proposal names it when it escapes the folder."""
    try:
        return resolve_inside(folder, f"knowledge/{relative}")
    except PathEscapeError:
        raise ProposalError(
            f"proposal {proposal_id} was not accepted: its body knowledge/{relative} (in "
            f"{PROPOSALS_DIR}/{proposal_id}) is a link out of the proposal's folder; nothing was moved. Reject it "
            "and draft again."
        ) from None


def _read_own(proposal_id: str, path: Path, max_bytes: int) -> bytes:
    """A file of the proposal's own folder, read as every knowledge source is (`migrations.read_source`)."""
    try:
        return read_source(path, max_bytes)
    except (FileNotFoundError, SourceUnreadable) as exc:
        why = exc.reason if isinstance(exc, SourceUnreadable) else "missing"
        raise ProposalError(
            f"proposal {proposal_id} was not accepted: its {path.name} is {why}; nothing was moved. Reject it and "
            "draft again."
        ) from exc


def refuse_proposal_secrets(root: Path, proposal_id: str, files: list[tuple[Path, Path]]) -> None:
    """Refuse a proposal whose migration or a body holds a secret (knowledge.secret_gate), before anything moves."""
    bound = max(MAX_BODY_BYTES, MAX_MIGRATION_BYTES)  # each was read within its own bound already
    texts = [(relative_to_root(root, own), _read_own(proposal_id, own, bound).decode("utf-8", "replace"))
             for own, _ in files]
    refuse_secrets(root, texts, nothing_done=f"proposal {proposal_id} was not accepted and nothing was moved",
                   # Not "take it out": a proposal's files are hashed, and one edited since drafted is refused.
                   take_it_out=f"Reject it (`theurian propose reject {proposal_id}`) and draft it again without "
                               "the secret")


def rehearse(root: Path, proposal_id: str, folder: Path, source: Path) -> None:
    """Refuse a migration `migrate apply` would refuse once it landed (an item that already exists in any status,
    another accepted proposal's item, a relation to nothing): landed, it would stop every later apply."""
    try:
        rehearse_with(root, read_migration(source, source.name, resolve_inside(folder, "knowledge")))
    except KnowledgeError as exc:
        raise ProposalError(
            f"proposal {proposal_id} was not accepted: `theurian migrate apply` would refuse the migrations with it "
            f"({exc.message}); nothing was moved. Reject it, or mend what is named, and accept again."
        ) from exc
