"""Two of the three write-intent tools: knowledge.proposeChange and knowledge.generateMigrationDraft
(review.generateKnowledgeCandidate is `serve.tools.review_candidate`).

Each handler builds a `DraftFacade` over the call's project and hands it to the drafting code; the facade's
reachable surface is its two draft entries, so no tool can accept a proposal, write a migration into
`.theurian/migrations/` or build a state. All three return the one proposal payload
(`proposal-response.schema.json`). REVISION_CONFLICT is answered as the contract's error envelope, so a caller
reads the code and the details rather than parsing prose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from knowledge.drafts import ChangeRequest, generate_migration_draft, propose_change
from knowledge.errors import ProposalRevisionConflictError
from knowledge.proposals import DraftFacade
from serve.errors import ToolRefusal
from serve.refusal import coded_refusal_text
from serve.tooling import Call, Tool, ToolKind
from theurian.project import Project

RESPONSE_SCHEMA: Final = "proposal-response.schema.json"


def _project(call: Call) -> Project:
    assert call.project is not None  # all are project-scoped: the dispatcher resolved it
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
        error = exc.as_document()["error"]
        raise ToolRefusal(coded_refusal_text(error["code"], error["message"], error["details"])) from None


def generate_migration_draft_tool(
    call: Call, *, author: str, description: str, operations: list[dict[str, Any]]
) -> Mapping[str, Any]:
    return generate_migration_draft(DraftFacade(_project(call).root), author=author, description=description,
                                    operations=operations, drafted_by="knowledge.generateMigrationDraft")


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
    ]
