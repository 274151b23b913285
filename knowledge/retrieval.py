"""knowledge.search: the ranked path over a published index that matches the active state, else substring.

Both paths end at the same canonical gate: every candidate is re-read from the active state and must be
surfaceable, at or below the disclosure ceiling and (with `asOf`) inside its validity window at that moment.
The index only proposes candidates and their order; it never supplies a served value.
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from knowledge.errors import IndexDamagedError
from knowledge.fusion import fuse
from knowledge.index import open_index
from knowledge.index_pointer import load_index_pointer
from knowledge.integrity import with_integrity
from knowledge.reading import (
    ITEM_COLUMNS,
    ITEM_JOIN,
    Reading,
    open_state,
    result_of,
    servable,
    within_validity,
)
from knowledge.vocabulary import SURFACEABLE_STATUSES
from theurian.project import Project
from theurian.stamped_store import VerifiedStores
from theurian.text import ascii_fold

DEFAULT_SEARCH_LIMIT: Final = 10
MAX_SEARCH_LIMIT: Final = 50
DEFAULT_MAX_TOKENS: Final = 2000
MIN_MAX_TOKENS: Final = 100
MAX_MAX_TOKENS: Final = 20000
CHARS_PER_TOKEN: Final = 4  # the usual estimate for English prose; the budget is approximate by contract
MAX_EXCERPT_CHARS: Final = 600
CUT_MARK: Final = "..."
CANDIDATE_DEPTH: Final = 200
_SPACES: Final = re.compile(r"\s+")


@dataclass(frozen=True)
class SearchRequest:
    query: str
    limit: int
    max_tokens: int
    moment: datetime  # the moment freshness is computed at: asOf, or now
    as_of: bool  # whether the validity window excludes


def clamp(value: int | None, default: int, low: int, high: int) -> int:
    return default if value is None else max(low, min(high, value))


def search(project: Project, ceiling: str, request: SearchRequest,
           stores: VerifiedStores | None = None) -> dict[str, Any]:
    """The response: query, count, the applied limit and maxTokens, results, retrieval envelope, integrity."""
    query = request.query.encode("utf-8", "replace").decode("utf-8")  # folds an unpaired surrogate
    with open_state(project, ceiling, stores) as reading:
        envelope: dict[str, Any] = {
            "snapshotId": reading.pointer.state_hash,
            "indexBuildId": None,
            "indexed": False,
            "fallbackReason": None,
            "stale": None,
            "channels": [],
            "unavailableChannels": [],
        }
        ranked = _ranked(reading, ceiling, query, request, envelope, stores)
        hits = ranked if ranked is not None else _substring(reading, query, request)
        results = _within_budget(hits, request)
    response = {
        "query": query,  # folded: an unpaired surrogate cannot be encoded back
        "count": len(results),
        "limit": request.limit,
        "maxTokens": request.max_tokens,
        "results": results,
        "retrieval": envelope,
    }
    return with_integrity(response, reading.damaged)


def _ranked(
    reading: Reading, ceiling: str, query: str, request: SearchRequest, envelope: dict[str, Any],
    stores: VerifiedStores | None,
) -> list[tuple[Any, dict[str, Any]]] | None:
    pointer = load_index_pointer(reading.project.root)
    if pointer is None:
        envelope["fallbackReason"] = "no-index"
        return None
    if pointer.state_hash != reading.pointer.state_hash:
        envelope["fallbackReason"] = "index-stale"
        return None
    if pointer.disclosure_ceiling != ceiling:
        envelope["fallbackReason"] = "index-ceiling-mismatch"
        return None
    # Refused like every derived store (a superseded, foreign or altered index included): the substring search
    # over the state answers instead.
    index = open_index(reading.project.root, pointer, stores)
    if index is None:
        envelope["fallbackReason"] = "index-unreadable"
        return None
    from knowledge.hybrid import propose  # numpy, only when an index answers (knowledge/index.py says why)

    with closing(index):
        try:
            proposal = propose(index, pointer, query, CANDIDATE_DEPTH)
        except (sqlite3.DatabaseError, IndexDamagedError):
            # Damage in pages `open_index`'s probe never read: the index is unreadable, not the state, and the
            # substring search over the state still answers.
            envelope["fallbackReason"] = "index-unreadable"
            return None
    envelope.update(indexBuildId=pointer.build_id, indexed=True, stale=False, channels=list(proposal.offered),
                    unavailableChannels=proposal.unavailable.document() if proposal.unavailable else [])
    hits = []
    for fused in fuse(proposal.channels, proposal.offered):
        row = reading.db.execute(
            f"SELECT {ITEM_COLUMNS} {ITEM_JOIN} WHERE i.project_id = ? AND i.item_id = ?",
            (reading.key, fused.item_id),
        ).fetchone()
        if (
            row is None
            or not servable(row, reading)
            or (request.as_of and not within_validity(row, request.moment))
        ):
            continue
        ranking: dict[str, Any] = {"fusedScore": round(fused.score, 6), "foundBy": list(fused.found_by)}
        path = proposal.raptor_paths.get(fused.item_id)
        if path is not None:
            ranking["raptorPath"] = [dict(node) for node in path]
        hits.append((row, ranking))
        if len(hits) == request.limit:
            break
    return hits


def _substring(reading: Reading, query: str, request: SearchRequest) -> list[tuple[Any, dict[str, Any]]]:
    statuses = ", ".join(f"'{s}'" for s in SURFACEABLE_STATUSES)
    rows = reading.db.execute(
        f"SELECT {ITEM_COLUMNS} {ITEM_JOIN} WHERE i.project_id = ? AND i.status IN ({statuses}) "
        f"AND i.sensitivity IN ({reading.allowed_sql}) "
        "AND instr(lower(r.title || char(10) || r.body), ?) > 0 "
        "ORDER BY i.item_id",
        (reading.key, ascii_fold(query)),
    )
    hits: list[tuple[Any, dict[str, Any]]] = []
    for row in rows:
        if not servable(row, reading) or (request.as_of and not within_validity(row, request.moment)):
            continue
        hits.append((row, {}))
        if len(hits) == request.limit:
            break
    return hits


def _within_budget(hits: list[tuple[Any, dict[str, Any]]], request: SearchRequest) -> list[dict[str, Any]]:
    """Excerpts share maxTokens (about 4 characters a token); hits stop when it is spent, the first never."""
    remaining = request.max_tokens * CHARS_PER_TOKEN
    results: list[dict[str, Any]] = []
    for row, ranking in hits:
        if results and remaining <= len(CUT_MARK):
            break
        text = _SPACES.sub(" ", row["body"]).strip()
        room = max(len(CUT_MARK) + 1, min(MAX_EXCERPT_CHARS, remaining))
        excerpt = text if len(text) <= room else text[: room - len(CUT_MARK)] + CUT_MARK
        remaining -= len(excerpt)
        results.append(result_of(row, request.moment, excerpt) | ranking)
    return results
