"""The two knowledge drafts: a new revision of an existing item (`knowledge.proposeChange`, `theurian propose
change`) and a migration of the ten v1 draft kinds (`knowledge.generateMigrationDraft`, `theurian propose
migration`). Both write through the `DraftFacade` they are handed, and only through it.

A change is drafted against what the caller may see: an item above the disclosure ceiling is "not available",
exactly as knowledge.get answers, so a draft never confirms that a withheld id exists. The new revision keeps
every property of the current one but its title and body; `expectedRevision` must name the current revision.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ulid import ULID

from knowledge.errors import (
    DraftKindError,
    ProposalRevisionConflictError,
)
from knowledge.proposals import V1_DRAFT_KINDS, ContentDraft, DraftFacade, OperationsDraft
from knowledge.reading import get_item
from theurian.project import Project
from theurian.schema_faults import json_kind, place_of
from theurian.stamped_store import VerifiedStores
from theurian.text import quoted

# The migration schema's bound on an item id (and the input schemas' on `itemId`; tests pin the three): every id
# it admits is quoted whole in a refusal, a longer one (the CLI has no schema in front of it) by its length.
MAX_ITEM_ID_CHARS: Final = 200
_SLUG_CHARS: Final = re.compile(r"[^a-z0-9]+")
_OPTIONAL_METADATA: Final = ("validFrom", "validTo")


@dataclass(frozen=True)
class ChangeRequest:
    """A new revision of an existing item, as a caller asks for it: `expected_revision` must name the current
    revision; `title` None keeps the current title; `description` None gives the proposal a reason naming the item;
    `drafted_by` is the surface that drafted it (a tool name or a CLI command), recorded in the evidence."""

    item_id: str
    expected_revision: str | None
    body: str
    author: str
    drafted_by: str
    title: str | None = None
    description: str | None = None


def shown_id(item_id: str) -> str:
    """An item id as a refusal quotes it ("No knowledge item 'x' is available…"): whole up to MAX_ITEM_ID_CHARS,
    past it by its length."""
    return quoted(item_id, MAX_ITEM_ID_CHARS, described_as="an id")


def slug(text: str) -> str:
    """A migration file-name slug from free text: a-z, 0-9 and single hyphens, at most 60 characters."""
    words = _SLUG_CHARS.sub("-", text.lower()).strip("-")[:60].strip("-")
    return words or "draft"


def propose_change(project: Project, ceiling: str, facade: DraftFacade, request: ChangeRequest,
                   stores: VerifiedStores | None = None) -> dict[str, Any]:
    """Draft the new revision `request` asks for; the proposal payload. `stores` is the daemon's verify-once
    cache (with none, the state is verified in full on this call).

    Raises:
        ItemNotAvailableError: no such item under this ceiling (absent, retired and withheld alike).
        StateMissingError: the project has no built state (the message names `theurian migrate apply`).
        ProposalRevisionConflictError: `request.expected_revision` is not the current revision.
        DraftRefusedError: the draft fails the migration validator.
    """
    item_id, expected_revision = request.item_id, request.expected_revision
    shown = shown_id(item_id)
    # A project with no built state is refused as knowledge.get refuses it, naming `theurian migrate apply`: no
    # state withholds nothing, so saying so tells a caller nothing it was not granted.
    current = get_item(project, ceiling, item_id, shown, stores)
    if expected_revision != current["revisionId"]:
        raise ProposalRevisionConflictError(item_id, expected=expected_revision, actual=current["revisionId"])
    revision_id = str(ULID())
    metadata = _metadata_of(current, request.title)
    reason = request.description or f"A new revision of {item_id}."
    return facade.draft_content(ContentDraft(
        slug=slug(f"revise-{item_id}"),
        author=request.author,
        description=reason,
        depends_on=(current["provenance"]["migrationId"],),
        revision={"op": "upsertRevision", "itemId": item_id, "revisionId": revision_id,
                  "expectedRevision": current["revisionId"], "metadata": metadata},
        body=request.body,
        body_path=f"{current['kind']}/{item_id}-{revision_id}.md",
        evidence={
            "draftedBy": request.drafted_by,
            "basedOn": {"itemId": item_id, "revisionId": current["revisionId"],
                        "contentSha256": current["provenance"]["contentSha256"],
                        "stateHash": current["provenance"]["stateHash"]},
            "anchors": metadata["sourceAnchors"],
            "reasoning": [reason],
        },
    ))


def generate_migration_draft(facade: DraftFacade, *, author: str, description: str,
                             operations: Sequence[Mapping[str, Any]], drafted_by: str) -> dict[str, Any]:
    """Draft a migration of the ten v1 draft kinds, validated before it is written; the proposal payload.

    Raises:
        DraftKindError: an operation's `op` is not one of the ten (the message names them).
        DraftRefusedError: the migration fails the validator (the message names the operation index).
    """
    for index, operation in enumerate(operations):
        kind = operation.get("op")
        if kind not in V1_DRAFT_KINDS:
            raise DraftKindError(_kind_refusal(index, operation))
    # Only an anchor that is an object is copied into the evidence: anything else is the validator's to refuse,
    # naming the operation, when the draft is checked before it is written.
    anchors = [dict(op["anchor"]) for op in operations
               if op.get("op") == "addEvidence" and isinstance(op.get("anchor"), Mapping)]
    return facade.draft_operations(OperationsDraft(
        slug=slug(description),
        author=author,
        description=description,
        operations=tuple(dict(op) for op in operations),
        evidence={"draftedBy": drafted_by, "anchors": anchors, "reasoning": [description]},
    ))


def _kind_refusal(index: int, operation: Mapping[str, Any]) -> str:
    """The refusal of an operation whose `op` is not a kind this tool drafts: the key and its place
    (`operations[0].op`, as a schema fault names a place), what it holds (a string quoted, anything else by its
    JSON type: never reprinted), and the ten values it admits."""
    kind = operation.get("op")
    found = ("is missing" if "op" not in operation else f"is {quoted(kind)}" if isinstance(kind, str)
             else f"is {json_kind(kind)}, not a string")
    return (f"knowledge.generateMigrationDraft: {place_of(('operations', index, 'op'), 'the operation')} {found}; "
            f"an operation's `op` must be one of the ten kinds this tool drafts: {', '.join(V1_DRAFT_KINDS)}. "
            "createItem and upsertRevision are drafted by knowledge.proposeChange (or "
            "review.generateKnowledgeCandidate); changeSensitivity and restoreItem are an operator's, written by "
            "hand. Nothing was drafted.")


def _metadata_of(current: Mapping[str, Any], title: str | None) -> dict[str, Any]:
    """The current revision's properties as upsertRevision metadata, with the new title when one is given."""
    anchors = [{key: value for key, value in anchor.items() if value is not None}
               for anchor in current["sourceAnchors"]]
    metadata: dict[str, Any] = {
        "title": title or current["title"],
        "contentType": current["contentType"],
        "kind": current["kind"],
        "namespace": current["namespace"],
        "status": current["status"],
        "owner": current["owner"],
        "trustLevel": current["trustLevel"],
        "sensitivity": current["sensitivity"],
        "labels": list(current["labels"]),
        "scopePaths": list(current["scopePaths"]),
        "sourceAnchors": anchors,
    }
    for key in _OPTIONAL_METADATA:
        if current.get(key) is not None:
            metadata[key] = current[key]
    if not anchors:
        metadata["originatesInTheurian"] = True
    return metadata
