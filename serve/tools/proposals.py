"""The three write-intent tools: knowledge.proposeChange, knowledge.generateMigrationDraft and
review.generateKnowledgeCandidate.

Each handler builds a `DraftFacade` over the call's project and hands it to the drafting code; the facade's
reachable surface is its two draft entries, so no tool can accept a proposal, write a migration into
`.theurian/migrations/` or build a state. All three return the one proposal payload
(`proposal-response.schema.json`). REVISION_CONFLICT is answered as the contract's error envelope, so a caller
reads the code and the details rather than parsing prose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import orjson

from knowledge.candidate import generate_candidate
from knowledge.drafts import ChangeRequest, generate_migration_draft, propose_change
from knowledge.errors import ProposalRevisionConflictError
from knowledge.proposals import DraftFacade
from projection.errors import ReviewStoreEscapeError, ReviewStoreUnavailable
from projection.review_store import REVIEW_STORE_ESCAPE_REFUSAL
from serve.errors import ToolRefusal
from serve.tooling import Call, Tool, ToolKind
from theurian.project import Project

RESPONSE_SCHEMA: Final = "proposal-response.schema.json"
CANDIDATE_STORE_UNAVAILABLE_REFUSAL: Final = (
    "REVIEW_STORE_UNAVAILABLE: this project has no review store this daemon can serve (it must be built here, "
    "by this installation and this build, from the current evidence format, and the record files it names must "
    "still be there). Run `theurian review build` in the project's folder, then call again. Nothing was drafted."
)


def _project(call: Call) -> Project:
    assert call.project is not None  # all three are project-scoped: the dispatcher resolved it
    return call.project


def propose_change_tool(
    call: Call,
    *,
    itemId: str,  # noqa: N803 - named exactly as the published input key
    expectedRevision: str | None,  # noqa: N803
    body: str,
    author: str,
    title: str | None = None,
    description: str | None = None,
) -> Mapping[str, Any]:
    project = _project(call)
    request = ChangeRequest(item_id=itemId, expected_revision=expectedRevision, body=body, author=author,
                            title=title, description=description, drafted_by="knowledge.proposeChange")
    try:
        return propose_change(project, call.settings.disclosure_ceiling, DraftFacade(project.root), request,
                              call.settings.stores)
    except ProposalRevisionConflictError as exc:
        raise ToolRefusal(orjson.dumps(exc.as_document()).decode("utf-8")) from None


def generate_migration_draft_tool(
    call: Call, *, author: str, description: str, operations: list[dict[str, Any]]
) -> Mapping[str, Any]:
    return generate_migration_draft(DraftFacade(_project(call).root), author=author, description=description,
                                    operations=operations, drafted_by="knowledge.generateMigrationDraft")


def generate_candidate_tool(
    call: Call,
    *,
    repository: str,
    recordKey: str,  # noqa: N803
    fixCommit: str,  # noqa: N803
    itemId: str,  # noqa: N803
    title: str,
    body: str,
    kind: str,
    category: str,
    owner: str,
    author: str,
    description: str | None = None,
    evidenceTrail: list[str] | None = None,  # noqa: N803
) -> Mapping[str, Any]:
    project = _project(call)
    try:
        return generate_candidate(
            project, call.settings.disclosure_ceiling, DraftFacade(project.root), repository=repository,
            record_key=recordKey, fix_commit=fixCommit, item_id=itemId, title=title, body=body, kind=kind,
            category=category, owner=owner, author=author, description=description,
            evidence_trail=evidenceTrail or [], drafted_by="review.generateKnowledgeCandidate",
        )
    except ReviewStoreEscapeError:
        raise ToolRefusal(REVIEW_STORE_ESCAPE_REFUSAL) from None
    except ReviewStoreUnavailable:
        raise ToolRefusal(CANDIDATE_STORE_UNAVAILABLE_REFUSAL) from None


def proposal_tools() -> list[Tool]:
    return [
        Tool(
            name="knowledge.proposeChange",
            title="Draft a knowledge change proposal",
            description=(
                "Draft a new revision (title and body) of an existing knowledge item as a proposal under "
                ".theurian/proposals/; REVISION_CONFLICT unless expectedRevision is the current revision. No "
                "approved-state write: a human accepts, merges and applies it."
            ),
            input_schema="knowledge-propose-change-input.schema.json",
            output_schema=RESPONSE_SCHEMA,
            handler=propose_change_tool,
            project_scoped=True,
            kind=ToolKind.WRITE_INTENT,
        ),
        Tool(
            name="knowledge.generateMigrationDraft",
            title="Draft a knowledge migration proposal",
            description=(
                "Draft a migration as a proposal under .theurian/proposals/, validated before it is written. "
                "Admits ten operation kinds: deprecateItem, addRelation, removeRelation, addAlias, removeAlias, "
                "changeOwner, registerSpecification, supersedeSpecification, addEvidence, removeEvidence. No "
                "approved-state write."
            ),
            input_schema="knowledge-generate-migration-draft-input.schema.json",
            output_schema=RESPONSE_SCHEMA,
            handler=generate_migration_draft_tool,
            project_scoped=True,
            kind=ToolKind.WRITE_INTENT,
        ),
        Tool(
            name="review.generateKnowledgeCandidate",
            title="Draft knowledge from a review thread",
            description=(
                "Turn one ingested review thread (repository and recordKey from review.search) and your "
                "generalization into a knowledge candidate proposal (trustLevel inferred, the thread as its "
                "source anchor). Theurian recomputes the promotion gate from the stored records and verifies "
                "fixCommit with git; it does not author or judge the generalization. No approved-state write."
            ),
            input_schema="review-generate-knowledge-candidate-input.schema.json",
            output_schema=RESPONSE_SCHEMA,
            handler=generate_candidate_tool,
            project_scoped=True,
            kind=ToolKind.WRITE_INTENT,
        ),
    ]
