"""A review thread, or a recurring concern's threads, promoted into a knowledge candidate
(`review.generateKnowledgeCandidate`, `theurian propose candidate`).

Theurian does not author the generalization; the caller does. What is computed here: the gate, recomputed from
the stored records and verified against git; the candidate (a new item, `trustLevel: inferred`, `text/markdown`,
the thread as its source anchor); and the evidence trail (the thread's record path, record key, content hash, each
gate signal and how it was computed). The stored records arrive as values (`knowledge.stored_thread`): the caller
looked them up in the verified review store (`projection.review_threads`); nothing here opens it.

From a concern (`concernId` instead of a thread), the gate is met when at least one member thread passes it: the
first member, in the store's order, whose five stored signals are met and that the fix commit touched. That thread
is the candidate's gate thread (its file the item's scope); every member is in `evidence.json` with its signals, and
every member thread is a source anchor, so the human reviewer sees the whole pattern.

The order of refusals is cheapest first and each is final: the source (exactly one of a thread and a concern),
kind, item id and sha shape; the thread; its file anchor; the five stored signals; the fix commit; an item id
already taken.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ulid import ULID

from knowledge.candidate_trail import member_entry, pull_entry, thread_anchor, thread_entry
from knowledge.drafts import MAX_ITEM_ID_CHARS, shown_id, slug
from knowledge.errors import CandidateRefusedError, ItemNotAvailableError, StateMissingError
from knowledge.git_verify import FixCommit, fix_commit_message, verify_fix_commit
from knowledge.promotion_gate import MET, Signal, generalizable, stored_signals, unmet_message
from knowledge.proposals import ContentDraft, DraftFacade
from knowledge.reading import get_item
from knowledge.stored_thread import StoredThreadValue
from knowledge.vocabulary import DEFAULT_SENSITIVITY, ITEM_KINDS
from theurian.id_patterns import full_commit_sha
from theurian.project import REVIEW_DIR, Project
from theurian.stamped_store import VerifiedStores
from theurian.text import quoted

CANDIDATE_TRUST_LEVEL: Final = "inferred"
CANDIDATE_CONTENT_TYPE: Final = "text/markdown"
# Accepting and merging the proposal is the human approval; the trust level keeps its origin visible.
CANDIDATE_STATUS: Final = "approved"
ITEM_ID: Final = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_ITEM_ID_CHARS - 1}}}")
# A revision's sourceAnchors bound (schemas/knowledge): a concern's anchors past it stay in evidence.json only.
MAX_SOURCE_ANCHORS: Final = 100
NO_FILE_ANCHOR_REFUSAL: Final = (
    "NO_FILE_ANCHOR: this thread is stored with no file anchor (its filePath is empty), so its fix-commit signal "
    "cannot be verified in v1 and it cannot become a candidate. Nothing was drafted."
)
TOOL_NAME: Final = "review.generateKnowledgeCandidate"
ONE_SOURCE_REFUSAL: Final = (
    f"{TOOL_NAME}: name exactly one source: a thread (repository and recordKey, from review.search) or a concern "
    "(concernId, from review.listConcerns), never both and never neither. Nothing was drafted."
)
THREAD_PAIR_REFUSAL: Final = (
    f"{TOOL_NAME}: repository and recordKey name a thread together: send both (or neither, with a concernId). "
    "Nothing was drafted."
)
# The eleven-member ReviewCommentCategory vocabulary; the MCP input schema closes `category` to the same set.
CATEGORIES: Final = (
    "specification-gap", "architecture-rule", "security-rule", "performance-rule", "reliability-rule",
    "coding-convention", "testing-rule", "domain-rule", "rejected-approach", "known-exception",
    "incident-prevention",
)


@dataclass(frozen=True)
class CandidateRequest:
    """One candidate call, as the tool and `theurian propose candidate` take it: exactly one source — a thread
    (`repository` and `record_key`) or a concern (`concern_id`) — and the caller's generalization."""

    fix_commit: str
    item_id: str
    title: str
    body: str
    kind: str
    category: str
    owner: str
    author: str
    drafted_by: str
    repository: str | None = None
    record_key: str | None = None
    concern_id: str | None = None
    description: str | None = None
    evidence_trail: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # One spelling from here on (git's, the lower case), as review.findings folds `commitSha`: the gate's git
        # question and the evidence trail then name the commit as `git log` does. Any other value is refused by
        # its shape in check_request.
        folded = full_commit_sha(self.fix_commit)
        if folded is not None:
            object.__setattr__(self, "fix_commit", folded)


@dataclass(frozen=True)
class _Gate:
    stored: StoredThreadValue  # the thread that met the gate
    signals: list[Signal]
    fix: FixCommit


def check_request(request: CandidateRequest) -> None:
    """The refusals that need no stored record: the source, the kind, the item id and the sha's shape.

    Raises:
        CandidateRefusedError: one of them is refused.
    """
    names_thread = request.repository is not None or request.record_key is not None
    if names_thread == (request.concern_id is not None):
        raise CandidateRefusedError(ONE_SOURCE_REFUSAL)
    if names_thread and (request.repository is None or request.record_key is None):
        raise CandidateRefusedError(THREAD_PAIR_REFUSAL)
    _check_shapes(request.kind, request.item_id, request.fix_commit)


def generate_candidate(project: Project, ceiling: str, facade: DraftFacade, request: CandidateRequest,
                       threads: Sequence[StoredThreadValue], stores: VerifiedStores | None = None) -> dict[str, Any]:
    """Check the gate over `threads` (the one thread, or every member of the concern, as the verified store
    handed them out) and draft the candidate; the proposal payload. `stores` is the daemon's verify-once cache
    for the knowledge state (with none, the state is verified in full on this call).

    Raises:
        CandidateRefusedError, GitUnavailableError: the candidate was refused.
    """
    check_request(request)
    if request.concern_id is None:
        gate = _thread_gate(project.root, request.fix_commit, threads[0])
    else:
        gate = _concern_gate(project.root, request.fix_commit, request.concern_id, threads)
    _require_new_item(project, ceiling, request.item_id, stores)
    thread = gate.stored.thread.record
    evidence = {signal.name: signal.as_evidence() for signal in [*gate.signals, gate.fix.signal, generalizable()]}
    anchors = _anchors(gate.stored, threads)
    revision_id = str(ULID())
    item_id, kind, category = request.item_id, request.kind, request.category
    namespace = item_id.rsplit(".", 1)[0] if "." in item_id else category
    reason = request.description or _default_reason(request, gate, threads)
    trail = _trail(gate, evidence, request, anchors, [reason, *request.evidence_trail])
    if request.concern_id is not None:
        trail["concern"] = {"concernId": request.concern_id, "memberCount": len(threads),
                            "members": [member_entry(member, _signals_of(member)) for member in threads]}
    return facade.draft_content(ContentDraft(
        slug=slug(request.title),
        author=request.author,
        description=reason,
        depends_on=(),
        before=({"op": "createItem", "itemId": item_id, "kind": kind, "namespace": namespace,
                 "owner": request.owner, "sensitivity": DEFAULT_SENSITIVITY, "trustLevel": CANDIDATE_TRUST_LEVEL},),
        revision={"op": "upsertRevision", "itemId": item_id, "revisionId": revision_id, "metadata": {
            "title": request.title, "contentType": CANDIDATE_CONTENT_TYPE, "kind": kind, "namespace": namespace,
            "status": CANDIDATE_STATUS, "owner": request.owner, "trustLevel": CANDIDATE_TRUST_LEVEL,
            "sensitivity": DEFAULT_SENSITIVITY, "labels": [category], "scopePaths": [thread["path"]],
            "sourceAnchors": anchors,
        }},
        body=request.body,
        body_path=f"{kind}/{item_id}-{revision_id}.md",
        evidence=trail,
    ))


def _thread_gate(root: Path, fix_commit: str, stored: StoredThreadValue) -> _Gate:
    file_path = stored.thread.record["path"]
    if not file_path.strip():
        raise CandidateRefusedError(NO_FILE_ANCHOR_REFUSAL)
    signals = _signals_of(stored) or []
    unmet = [signal for signal in signals if signal.outcome != MET]
    if unmet:
        raise CandidateRefusedError(unmet_message(unmet))
    fix = verify_fix_commit(root, fix_commit, file_path)
    if fix.signal.outcome != MET:
        raise CandidateRefusedError(fix_commit_message(fix_commit, file_path))
    return _Gate(stored, signals, fix)


def _concern_gate(root: Path, fix_commit: str, concern_id: str, members: Sequence[StoredThreadValue]) -> _Gate:
    """The first member thread, in the store's order, that passes the stored signals and that `fix_commit`
    touched."""
    passing, unmet_lines = [], []
    for member in members:
        signals = _signals_of(member)
        if signals is None or not member.thread.record["path"].strip():
            continue
        unmet = [signal for signal in signals if signal.outcome != MET]
        if unmet:
            unmet_lines.append(f"{member.thread.record['recordKey']}: "
                               + ", ".join(f"{s.name} is {s.outcome}" for s in unmet))
        else:
            passing.append((member, signals))
    if not passing:
        raise CandidateRefusedError(
            f"PROMOTION_GATE_UNMET: {TOOL_NAME} recomputed the promotion gate from the stored records of concern "
            f"{concern_id} and no member thread with a file anchor meets it, so nothing was drafted. "
            + "; ".join(unmet_lines[:20]) + ". At least one member thread must be resolved, on a merged pull "
            "request whose CI succeeded, with a comment."
        )
    for member, signals in passing:
        fix = verify_fix_commit(root, fix_commit, member.thread.record["path"])
        if fix.signal.outcome == MET:
            return _Gate(member, signals, fix)
    paths = sorted({member.thread.record["path"] for member, _ in passing})
    shown = ", ".join(repr(path) for path in paths[:10]) + (f" and {len(paths) - 10} more" if len(paths) > 10 else "")
    raise CandidateRefusedError(
        f"FIX_COMMIT_NOT_VERIFIED: fixCommit {fix_commit} is not a commit in this project's git repository that "
        f"changed the file of a member thread of concern {concern_id} that passes the stored signals ({shown}), so "
        "fixCommitPresent is not met and nothing was drafted. Name the full sha of the commit that fixed what one "
        "of those threads raised (fetch it first if this clone lacks it)."
    )


def _signals_of(stored: StoredThreadValue) -> list[Signal] | None:
    """The five stored signals of a thread; None for a review submission (never the gate's)."""
    record = stored.thread.record
    if record["kind"] != "review-thread":
        return None
    pull = stored.pull_request
    return stored_signals(record, _lake_path(stored.thread.record_path), None if pull is None else pull.record,
                          None if pull is None else _lake_path(pull.record_path))


def _anchors(gate: StoredThreadValue, threads: Sequence[StoredThreadValue]) -> list[dict[str, Any]]:
    """The gate thread's anchor first, then every other member thread's, once each, within the bound."""
    anchors = [thread_anchor(gate.thread.record)]
    seen = {anchors[0]["sourceUri"]}
    for member in threads:
        record = member.thread.record
        if record["kind"] == "review-thread" and record["sourceUri"] not in seen:
            seen.add(record["sourceUri"])
            anchors.append(thread_anchor(record))
    return anchors[:MAX_SOURCE_ANCHORS]


def _default_reason(request: CandidateRequest, gate: _Gate, threads: Sequence[StoredThreadValue]) -> str:
    if request.concern_id is None:
        return (f"A {request.category} generalised from review thread {request.record_key} in "
                f"{request.repository}.")
    record = gate.stored.thread.record
    pulls = len({(m.thread.record["repository"], m.thread.record["pullRequest"]) for m in threads})
    return (f"A {request.category} generalised from recurring concern {request.concern_id}: {len(threads)} review "
            f"records across {pulls} pull requests (the gate met by thread {record['recordKey']} in "
            f"{record['repository']}).")

def _check_shapes(kind: str, item_id: str, fix_commit: str) -> None:
    if kind not in ITEM_KINDS:
        raise CandidateRefusedError(
            f"{TOOL_NAME}: kind {quoted(kind)} is not an item kind. Use one of: {', '.join(ITEM_KINDS)}. "
            "Nothing was drafted."
        )
    if not ITEM_ID.fullmatch(item_id):
        raise CandidateRefusedError(
            f"{TOOL_NAME}: itemId must be letters, digits, '.', '_' and '-' (starting with a letter or digit, at "
            f"most {MAX_ITEM_ID_CHARS} characters). Nothing was drafted."
        )
    if full_commit_sha(fix_commit) is None:
        raise CandidateRefusedError(
            f"{TOOL_NAME}: fixCommit must be a full 40- or 64-character hex sha (either case), never a short one or "
            "a ref name. Nothing was drafted."
        )


def _require_new_item(project: Project, ceiling: str, item_id: str, stores: VerifiedStores | None) -> None:
    try:
        get_item(project, ceiling, item_id, shown_id(item_id), stores)
    except (ItemNotAvailableError, StateMissingError):
        return
    raise CandidateRefusedError(
        f"{TOOL_NAME}: item {item_id!r} already exists; a candidate creates a new item. Choose another itemId, or "
        "draft a new revision of it with knowledge.proposeChange. Nothing was drafted."
    )


def _lake_path(record_path: str) -> str:
    return f"{REVIEW_DIR}/{record_path}"


def _trail(gate: _Gate, evidence: dict[str, Any], request: CandidateRequest, anchors: list[dict[str, Any]],
           reasoning: list[str]) -> dict[str, Any]:
    return {
        "draftedBy": request.drafted_by,
        "thread": thread_entry(gate.stored),
        "pullRequest": pull_entry(gate.stored.pull_request),
        "gate": evidence,
        "fixCommit": {"sha": request.fix_commit, "changedFiles": list(gate.fix.touched)},
        "generalization": {"itemId": request.item_id, "title": request.title, "kind": request.kind,
                           "category": request.category, "owner": request.owner},
        "anchors": anchors,
        "reasoning": reasoning,
    }
