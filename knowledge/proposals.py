"""Proposal directories: drafts a human reviews, `.theurian/proposals/<proposalId>/`.

    <migrationId>-<slug>.yaml   schema-valid and directly applicable once accepted
    knowledge/…                 the body the migration points at (content drafts only)
    evidence.json               anchors and the reasoning trail

A tool is handed a `DraftFacade` and nothing else: its reachable surface is the two draft entries, so no tool can
reach `accept_proposal` (the move into `.theurian/migrations/` and `.theurian/knowledge/`), which only the CLI
calls. Every draft is validated before the first byte is written, and each lands in a directory created
exclusively under a fresh ULID, so concurrent drafts never share a directory, a migration id or a revision id.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import orjson
import yaml
from ulid import ULID

from knowledge.draft_conflicts import first_conflict
from knowledge.errors import DraftRefusedError, KnowledgeError
from knowledge.migration_gate import controls_fault
from knowledge.migrations import CONTENT_PREFIX, sha256_checksum, validate_document
from knowledge.proposal_files import EVIDENCE_NAME, proposal_folder, relative_to_root, write_new
from knowledge.proposal_hidden import HIDDEN_FIELD, hidden_in, hidden_step
from knowledge.secret_gate import refuse_secrets
from theurian.project import KNOWLEDGE_DIR, MIGRATIONS_DIR

V1_DRAFT_KINDS: Final = (
    "deprecateItem", "addRelation", "removeRelation", "addAlias", "removeAlias", "changeOwner",
    "registerSpecification", "supersedeSpecification", "addEvidence", "removeEvidence",
)
CONTENT_KINDS: Final = ("createItem", "upsertRevision")
API_VERSION: Final = "theurian.dev/v1"


@dataclass(frozen=True)
class ContentDraft:
    """A body and its revision: `revision` is an upsertRevision without contentFile/contentSha256, which the
    facade fills from the body it writes; `before` holds a createItem when the draft creates the item."""

    slug: str
    author: str
    description: str
    depends_on: tuple[str, ...]
    revision: dict[str, Any]
    body: str
    body_path: str  # under knowledge/, e.g. "convention/orders.lock-order-01K….md"
    evidence: dict[str, Any]
    before: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class OperationsDraft:
    """A migration of the ten v1 draft kinds and no body."""

    slug: str
    author: str
    description: str
    operations: tuple[dict[str, Any], ...]
    evidence: dict[str, Any] = field(default_factory=dict)


class DraftFacade:
    """The only handle a tool holds on proposals: two draft entries, nothing that accepts or commits."""

    __slots__ = ("_root",)

    def __init__(self, root: Path) -> None:
        self._root = root

    def draft_content(self, draft: ContentDraft) -> dict[str, Any]:
        """Write a proposal holding one body and the migration that makes it a revision; return the payload."""
        kinds = [op["op"] for op in draft.before] + [draft.revision["op"]]
        if kinds[-1] != "upsertRevision" or any(kind not in CONTENT_KINDS for kind in kinds):
            raise DraftRefusedError("a content draft holds createItem and one upsertRevision, nothing else")
        return _write(self._root, draft.slug, draft.author, draft.description, draft.depends_on,
                      list(draft.before), draft.revision, (draft.body_path, draft.body), draft.evidence)

    def draft_operations(self, draft: OperationsDraft) -> dict[str, Any]:
        """Write a proposal holding a migration of the ten v1 draft kinds; return the payload."""
        for index, operation in enumerate(draft.operations):
            if operation.get("op") not in V1_DRAFT_KINDS:
                raise DraftRefusedError(
                    f"operation {index} is not one of the ten kinds a migration draft admits: "
                    f"{', '.join(V1_DRAFT_KINDS)} (createItem and upsertRevision are knowledge.proposeChange's; "
                    "changeSensitivity and restoreItem are an operator's, written by hand)"
                )
        drafted = _write(self._root, draft.slug, draft.author, draft.description, (), list(draft.operations),
                         None, None, draft.evidence)
        drafted["nextSteps"] = [*drafted["nextSteps"][:1], ITEM_IDS_UNCHECKED_STEP, *drafted["nextSteps"][1:]]
        return drafted


# A draft's shape is checked, never the items it names: refusing an id a caller may not see, and not an absent one,
# would tell the caller which hidden ids exist (SEC-13). So the answer says what was not checked, and where it is.
# The command is named unquoted: the CLI adds `--project` to every backticked command, and this one needs the id
# the next line's gives.
ITEM_IDS_UNCHECKED_STEP: Final = (
    "The item ids this draft names were not checked against the project's knowledge (a draft never says which "
    "items exist); accepting it (theurian propose accept, next) checks them, and refuses the proposal, moving "
    "nothing, if one names an item that does not exist."
)


def _write(root: Path, slug: str, author: str, description: str, depends_on: tuple[str, ...],
           operations: list[dict[str, Any]], revision: dict[str, Any] | None, body: tuple[str, str] | None,
           evidence: dict[str, Any]) -> dict[str, Any]:
    migration_id = str(ULID())
    created_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    file_name = f"{migration_id}-{slug}.yaml"
    content: dict[str, Any] = {}
    if revision is not None and body is not None:
        data = body[1].encode("utf-8")
        content = {"contentFile": f"{CONTENT_PREFIX}{body[0]}", "contentSha256": sha256_checksum(data)}
        operations = [*operations, {**revision, **content}]
    document = {
        "apiVersion": API_VERSION, "id": migration_id, "createdAt": created_at, "author": author,
        "dependsOn": list(depends_on), "description": description, "operations": operations,
    }
    try:
        validate_document(file_name, document)
    except KnowledgeError as exc:
        raise DraftRefusedError(f"the draft was refused before anything was written: {exc.message}") from exc
    conflict = first_conflict(operations)
    if conflict is not None:
        raise DraftRefusedError(f"the draft was refused before anything was written: {conflict}")
    _refuse_controls(document, content, body)
    migration = _yaml(document)
    _refuse_secrets(root, file_name, migration, body, evidence)
    hidden = _hidden(file_name, migration, body, evidence)
    folder, proposal_id = proposal_folder(root)
    try:
        if body is not None:
            write_new(folder, f"knowledge/{body[0]}", body[1].encode("utf-8"))
        write_new(folder, file_name, migration)
        # The migration's hash as drafted: accept refuses a migration edited since (the reviewer reads the draft).
        trail = {"proposalId": proposal_id, "migrationId": migration_id, "migrationFile": file_name,
                 "migrationSha256": sha256_checksum(migration), "createdAt": created_at, "author": author,
                 "description": description, **evidence, HIDDEN_FIELD: hidden}
        write_new(folder, EVIDENCE_NAME, orjson.dumps(trail, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)  # a half-written draft is no draft
        raise
    return payload(root, folder, proposal_id, file_name, document, content, body, hidden)


def _refuse_controls(document: dict[str, Any], content: dict[str, Any], body: tuple[str, str] | None) -> None:
    """Refuse a draft whose fields hold a control character `migrate apply` would refuse (knowledge.migration_gate),
    naming the field and the character's code point (never echoing the value)."""
    bodies = {content["contentFile"]: body[1]} if body is not None else {}
    fault = controls_fault(document["author"], document["description"], document["operations"], bodies)
    if fault is None:
        return
    index, problem = fault
    where = f"operation {index}" if index is not None else "the migration"
    raise DraftRefusedError(f"the draft was refused before anything was written: {where}: {problem}")


def _refuse_secrets(root: Path, file_name: str, migration: bytes, body: tuple[str, str] | None,
                    evidence: dict[str, Any]) -> None:
    """Refuse a draft holding a secret (knowledge.secret_gate) before its folder exists. Files are named as the
    proposal will hold them; the trail is scanned as written, less the ids it gains (which hold no text)."""
    texts = [(f"the draft's knowledge/{body[0]}", body[1])] if body is not None else []
    texts.append((f"the draft's {file_name}", migration.decode("utf-8")))
    texts.append((f"the draft's {EVIDENCE_NAME}",
                  orjson.dumps(evidence, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode("utf-8")))
    refuse_secrets(root, texts, nothing_done="the draft was refused and nothing was written", make_salt=False)


def _hidden(file_name: str, migration: bytes, body: tuple[str, str] | None,
            evidence: dict[str, Any]) -> dict[str, list[str]]:
    """The hidden characters in the draft's files as the reviewer will open them (the trail as the caller gave
    it: the ids and hashes it gains hold none)."""
    files = {f"knowledge/{body[0]}": body[1]} if body is not None else {}
    files[file_name] = migration.decode("utf-8")
    files[EVIDENCE_NAME] = orjson.dumps(evidence).decode("utf-8")
    return hidden_in(files)


def payload(root: Path, folder: Path, proposal_id: str, file_name: str, document: dict[str, Any],
            content: dict[str, Any], body: tuple[str, str] | None,
            hidden: dict[str, list[str]]) -> dict[str, Any]:
    """The one proposal payload every drafting surface returns (the contract's twelve keys)."""
    directory = relative_to_root(root, folder)
    revision = next((op for op in document["operations"] if op["op"] == "upsertRevision"), None)
    return {
        "proposalId": proposal_id,
        "proposalDirectory": directory,
        "migrationId": document["id"],
        "migrationFile": file_name,
        "revisionId": revision["revisionId"] if revision else None,
        "expectedRevision": revision.get("expectedRevision") if revision else None,
        "bodyFile": f"{directory}/knowledge/{body[0]}" if body else None,
        "evidenceFile": f"{directory}/{EVIDENCE_NAME}",
        "contentFile": content.get("contentFile"),
        "contentSha256": content.get("contentSha256"),
        "bodyDestination": f"{KNOWLEDGE_DIR}/{body[0]}" if body else None,
        "nextSteps": [
            f"Read the draft under {directory}/ (the migration, {EVIDENCE_NAME}"
            + (", the body" if body else "") + ").",
            *([step] if (step := hidden_step(hidden)) else []),
            f"Accept it with `theurian propose accept {proposal_id}` (moves the migration into {MIGRATIONS_DIR}/"
            + (f" and the body into {KNOWLEDGE_DIR}/" if body else "") + f"), or `theurian propose reject "
            f"{proposal_id}`.",
            "Commit the accepted files and open a pull request: a human merging it is the approval.",
            "After the merge, run `theurian migrate apply` (and `theurian index build`).",
        ],
    }


def _yaml(document: dict[str, Any]) -> bytes:
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100)
    return text.encode("utf-8")

