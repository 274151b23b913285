"""A review thread promoted into a knowledge candidate (`review.generateKnowledgeCandidate`, `theurian propose
candidate`).

Theurian does not author the generalization; the caller does. What is computed here: the gate, recomputed from
the stored records and verified against git; the candidate (a new item, `trustLevel: inferred`, `text/markdown`,
the thread as its one source anchor); and the evidence trail (the thread's record path, record key, content
hash, each gate signal and how it was computed). The order of refusals is cheapest first and each is final:
kind, item id and sha shape; the thread; its file anchor; the five stored signals; the fix commit; an item id
already taken.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ulid import ULID

from knowledge.drafts import MAX_SHOWN, slug
from knowledge.errors import CandidateRefusedError, ItemNotAvailableError, StateMissingError
from knowledge.git_verify import FULL_SHA, fix_commit_message, verify_fix_commit
from knowledge.promotion_gate import MET, generalizable, stored_signals, unmet_message
from knowledge.proposals import ContentDraft, DraftFacade
from knowledge.reading import get_item
from knowledge.stored_thread import StoredThread, load_thread
from knowledge.vocabulary import DEFAULT_SENSITIVITY, ITEM_KINDS
from theurian.project import Project

CANDIDATE_TRUST_LEVEL: Final = "inferred"
CANDIDATE_CONTENT_TYPE: Final = "text/markdown"
# Accepting and merging the proposal is the human approval; the trust level keeps its origin visible.
CANDIDATE_STATUS: Final = "approved"
ITEM_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
NO_FILE_ANCHOR_REFUSAL: Final = (
    "NO_FILE_ANCHOR: this thread is stored with no file anchor (its filePath is empty), so its fix-commit signal "
    "cannot be verified in v1 and it cannot become a candidate. Nothing was drafted."
)
TOOL_NAME: Final = "review.generateKnowledgeCandidate"
# The eleven-member ReviewCommentCategory vocabulary; the MCP input schema closes `category` to the same set.
CATEGORIES: Final = (
    "specification-gap", "architecture-rule", "security-rule", "performance-rule", "reliability-rule",
    "coding-convention", "testing-rule", "domain-rule", "rejected-approach", "known-exception",
    "incident-prevention",
)


def generate_candidate(project: Project, ceiling: str, facade: DraftFacade, *, repository: str, record_key: str,
                       fix_commit: str, item_id: str, title: str, body: str, kind: str, category: str,
                       owner: str, author: str, description: str | None, evidence_trail: Sequence[str],
                       drafted_by: str) -> dict[str, Any]:
    """Check the gate and draft the candidate; the proposal payload.

    Raises:
        CandidateRefusedError, ThreadNotAvailableError, GitUnavailableError: the candidate was refused.
        ReviewStoreUnavailable, ReviewStoreEscapeError, PathEscapeError: the review store cannot be served.
    """
    _check_shapes(kind, item_id, fix_commit)
    stored = load_thread(project.root, repository, record_key)
    thread = stored.thread.record
    file_path = thread["path"]
    if not file_path.strip():
        raise CandidateRefusedError(NO_FILE_ANCHOR_REFUSAL)
    pull = stored.pull_request
    signals = stored_signals(thread, _lake_path(stored.thread.record_path), None if pull is None else pull.record,
                             None if pull is None else _lake_path(pull.record_path))
    unmet = [signal for signal in signals if signal.outcome != MET]
    if unmet:
        raise CandidateRefusedError(unmet_message(unmet))
    fix = verify_fix_commit(project.root, fix_commit, file_path)
    if fix.signal.outcome != MET:
        raise CandidateRefusedError(fix_commit_message(fix_commit, file_path))
    _require_new_item(project, ceiling, item_id)
    gate = {signal.name: signal.as_evidence() for signal in [*signals, fix.signal, generalizable()]}
    anchor = thread_anchor(thread)
    revision_id = str(ULID())
    namespace = item_id.rsplit(".", 1)[0] if "." in item_id else category
    reason = description or f"A {category} generalised from review thread {record_key} in {repository}."
    return facade.draft_content(ContentDraft(
        slug=slug(title),
        author=author,
        description=reason,
        depends_on=(),
        before=({"op": "createItem", "itemId": item_id, "kind": kind, "namespace": namespace, "owner": owner,
                 "sensitivity": DEFAULT_SENSITIVITY, "trustLevel": CANDIDATE_TRUST_LEVEL},),
        revision={"op": "upsertRevision", "itemId": item_id, "revisionId": revision_id, "metadata": {
            "title": title, "contentType": CANDIDATE_CONTENT_TYPE, "kind": kind, "namespace": namespace,
            "status": CANDIDATE_STATUS, "owner": owner, "trustLevel": CANDIDATE_TRUST_LEVEL,
            "sensitivity": DEFAULT_SENSITIVITY, "labels": [category], "scopePaths": [file_path],
            "sourceAnchors": [anchor],
        }},
        body=body,
        body_path=f"{kind}/{item_id}-{revision_id}.md",
        evidence=_trail(stored, gate, fix_commit, fix.touched, anchor, drafted_by,
                        {"itemId": item_id, "title": title, "kind": kind, "category": category, "owner": owner},
                        [reason, *evidence_trail]),
    ))


def thread_anchor(thread: Mapping[str, Any]) -> dict[str, Any]:
    """The thread as a source anchor: its URL, repository, file, lines, and the commit it was left on."""
    anchor: dict[str, Any] = {"provider": thread["provider"], "sourceUri": thread["sourceUri"],
                              "repository": thread["repository"], "filePath": thread["path"]}
    comments = thread["comments"]
    commit = comments[0].get("originalCommitOid") if comments else None
    if isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{4,64}", commit):
        anchor["commitSha"] = commit
    end = thread.get("originalLine") or thread.get("line")
    start = thread.get("originalStartLine") or thread.get("startLine") or end
    if isinstance(start, int) and isinstance(end, int) and 1 <= start <= end:
        anchor["lineStart"], anchor["lineEnd"] = start, end
    return anchor


def _check_shapes(kind: str, item_id: str, fix_commit: str) -> None:
    if kind not in ITEM_KINDS:
        shown = repr(kind) if len(kind) <= MAX_SHOWN else f"a value of {len(kind)} characters"
        raise CandidateRefusedError(
            f"{TOOL_NAME}: kind {shown} is not an item kind. Use one of: {', '.join(ITEM_KINDS)}. "
            "Nothing was drafted."
        )
    if not ITEM_ID.fullmatch(item_id):
        raise CandidateRefusedError(
            f"{TOOL_NAME}: itemId must be letters, digits, '.', '_' and '-' (starting with a letter or digit, at "
            "most 200 characters). Nothing was drafted."
        )
    if not FULL_SHA.fullmatch(fix_commit):
        raise CandidateRefusedError(
            f"{TOOL_NAME}: fixCommit must be a full 40- or 64-character lowercase hex sha, never a short one or a "
            "ref name. Nothing was drafted."
        )


def _require_new_item(project: Project, ceiling: str, item_id: str) -> None:
    try:
        get_item(project, ceiling, item_id, repr(item_id))
    except (ItemNotAvailableError, StateMissingError):
        return
    raise CandidateRefusedError(
        f"{TOOL_NAME}: item {item_id!r} already exists; a candidate creates a new item. Choose another itemId, or "
        "draft a new revision of it with knowledge.proposeChange. Nothing was drafted."
    )


def _lake_path(record_path: str) -> str:
    return f".theurian/review/{record_path}"


def _trail(stored: StoredThread, gate: dict[str, Any], fix_commit: str, touched: Sequence[str],
           anchor: dict[str, Any], drafted_by: str, generalization: dict[str, Any],
           reasoning: list[str]) -> dict[str, Any]:
    thread = stored.thread
    pull = stored.pull_request
    return {
        "draftedBy": drafted_by,
        "thread": {
            "repository": thread.record["repository"], "recordKey": thread.record["recordKey"],
            "recordPath": thread.record_path, "contentHash": thread.content_hash,
            "pullRequest": thread.record["pullRequest"], "filePath": thread.record["path"],
            "state": thread.record["state"], "sourceUri": thread.record["sourceUri"],
        },
        "pullRequest": None if pull is None else {
            "recordKey": pull.record["recordKey"], "recordPath": pull.record_path, "contentHash": pull.content_hash,
        },
        "gate": gate,
        "fixCommit": {"sha": fix_commit, "changedFiles": list(touched)},
        "generalization": generalization,
        "anchors": [anchor],
        "reasoning": reasoning,
    }
