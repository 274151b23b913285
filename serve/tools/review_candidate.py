"""review.generateKnowledgeCandidate: one review thread, or one recurring concern's threads, and the caller's
generalization, drafted into a knowledge candidate proposal.

The composition the tool and `theurian propose candidate` share (`draft_candidate`): the request's own refusals
first, then the stored records looked up in the verified review store (`projection.review_threads`) and handed to
`knowledge.candidate` as values — knowledge never opens the store. A `DraftFacade` is the only handle on proposals
the drafting code holds, so no call can accept a proposal or write an approved state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from knowledge.candidate import CandidateRequest, check_request, generate_candidate
from knowledge.proposals import DraftFacade
from projection.errors import ReviewStoreEscapeError, ReviewStoreUnavailable
from projection.review_store import REVIEW_STORE_ESCAPE_REFUSAL
from projection.review_threads import StoredThread, load_concern, load_thread
from serve.errors import ToolRefusal
from serve.tooling import Call, Tool, ToolKind
from theurian.project import Project
from theurian.stamped_store import VerifiedStores

TOOL_NAME: Final = "review.generateKnowledgeCandidate"
RESPONSE_SCHEMA: Final = "proposal-response.schema.json"
CANDIDATE_STORE_UNAVAILABLE_REFUSAL: Final = (
    "REVIEW_STORE_UNAVAILABLE: this project has no review store this daemon can serve (it must be built here, "
    "by this installation and this build, from the current evidence format, and the record files it names must "
    "still be there). Run `theurian review build` in the project's folder, then call again. Nothing was drafted."
)


def draft_candidate(project: Project, ceiling: str, request: CandidateRequest,
                    stores: VerifiedStores | None = None) -> dict[str, Any]:
    """Check the request, read its thread (or its concern's members) from the verified store, draft. `stores` is
    the daemon's verify-once cache (the CLI passes none: one verification for this call).

    Raises:
        CandidateRefusedError, GitUnavailableError, ThreadNotAvailableError, ConcernNotAvailableError: refused.
        ReviewStoreUnavailable, ReviewStoreEscapeError, PathEscapeError: the review store cannot be served.
    """
    check_request(request)
    threads: list[StoredThread]
    if request.concern_id is not None:
        threads = load_concern(project.root, request.concern_id, stores).members
    else:
        assert request.repository is not None and request.record_key is not None  # check_request saw both
        threads = [load_thread(project.root, request.repository, request.record_key, stores)]
    return generate_candidate(project, ceiling, DraftFacade(project.root), request, threads, stores)


def generate_candidate_tool(
    call: Call,
    *,
    fixCommit: str,  # noqa: N803 - named exactly as the published input key
    itemId: str,  # noqa: N803
    title: str,
    body: str,
    kind: str,
    category: str,
    owner: str,
    author: str,
    repository: str | None = None,
    recordKey: str | None = None,  # noqa: N803
    concernId: str | None = None,  # noqa: N803
    description: str | None = None,
    evidenceTrail: list[str] | None = None,  # noqa: N803
) -> Mapping[str, Any]:
    assert call.project is not None  # project-scoped: the dispatcher resolved it
    request = CandidateRequest(
        fix_commit=fixCommit, item_id=itemId, title=title, body=body, kind=kind, category=category, owner=owner,
        author=author, drafted_by=TOOL_NAME, repository=repository, record_key=recordKey, concern_id=concernId,
        description=description, evidence_trail=tuple(evidenceTrail or ()),
    )
    try:
        return draft_candidate(call.project, call.settings.disclosure_ceiling, request, call.settings.stores)
    except ReviewStoreEscapeError:
        raise ToolRefusal(REVIEW_STORE_ESCAPE_REFUSAL) from None
    except ReviewStoreUnavailable:
        raise ToolRefusal(CANDIDATE_STORE_UNAVAILABLE_REFUSAL) from None


def review_candidate_tools() -> list[Tool]:
    return [
        Tool(
            name=TOOL_NAME,
            title="Draft knowledge from a review thread",
            description=(
                "Turn one ingested review thread (repository and recordKey from review.search), or one recurring "
                "concern (concernId from review.listConcerns), and your generalization into a knowledge candidate "
                "proposal (trustLevel inferred, the threads as its source anchors). Theurian recomputes the "
                "promotion gate from the stored records (for a concern, one member thread must pass it) and "
                "verifies fixCommit with git; it does not author or judge the generalization. No approved-state "
                "write."
            ),
            input_schema="review-generate-knowledge-candidate-input.schema.json",
            output_schema=RESPONSE_SCHEMA,
            handler=generate_candidate_tool,
            project_scoped=True,
            kind=ToolKind.WRITE_INTENT,
        )
    ]
