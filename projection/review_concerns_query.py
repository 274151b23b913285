"""The reads `review.listConcerns`, review.findSimilar's `concernId` and the candidate from a concern serve from: the
concerns a build stored (`projection.review_concerns`), read back through the verified store.

The list is ordered by how widely a concern recurs — distinct pull requests, then reviewers, then repositories, then
members, all most first — and ties by concern id, so one store gives one order. Every filter is bound as a
parameter. `q` is matched as review.search matches it (`contains` over the ASCII-folded text, `FOLD_SQL`) against
the representative text, the whole of the comment the excerpt is cut from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from evidence.records import KINDS
from projection.errors import ReviewStoreUnavailable
from projection.review_layout import FOLD_SQL
from projection.review_query import EXCERPT_SQL
from projection.review_store import READ_FAULTS, open_store
from theurian.stamped_store import VerifiedStores

# The members a listed concern names, in the store's total order; `memberCount` always counts them all.
MAX_LISTED_MEMBERS: Final = 50
_ORDER: Final = "c.pull_requests DESC, c.reviewers DESC, c.repositories DESC, c.members DESC, c.concern_id"


@dataclass(frozen=True)
class ConcernFilter:
    """Already-validated filters; None means "no filter". `q_folded` is ASCII-folded."""

    repository: str | None = None
    min_pull_requests: int | None = None
    q_folded: str | None = None


@dataclass(frozen=True)
class ConcernMember:
    repository: str
    record_key: str
    kind: str
    pull_request: int
    record_path: str


@dataclass(frozen=True)
class StoredConcern:
    concern_id: str
    member_count: int
    pull_requests: int
    reviewers: int
    repositories: int
    first_seen: str | None
    last_seen: str | None
    resolved: int
    gate_passing: int
    excerpt: str  # cut as review.search cuts (`review_query.EXCERPT_SQL`)
    excerpt_channel: str
    representative: ConcernMember
    members: list[ConcernMember]  # at most MAX_LISTED_MEMBERS (all of them for `concern_members`)


def list_concerns(root: Path, where: ConcernFilter, limit: int,
                  stores: VerifiedStores | None = None) -> list[StoredConcern]:
    """Up to `limit` concerns matching every filter, the most widely recurring first.

    Raises:
        PathEscapeError, ReviewStoreEscapeError, ReviewStoreUnavailable: as `open_store`, or a row is damaged.
    """
    clauses: list[str] = []
    params: list[object] = []
    if where.repository is not None:
        clauses.append("c.concern_id IN (SELECT m.concern_id FROM s.concern_members m JOIN s.records r "
                       "ON r.ordinal = m.ordinal WHERE r.repository = ?)")
        params.append(where.repository)
    if where.min_pull_requests is not None:
        clauses.append("c.pull_requests >= ?")
        params.append(where.min_pull_requests)
    if where.q_folded is not None:
        clauses.append(f"contains({FOLD_SQL.replace('body', 't.body')}, ?)")
        params.append(where.q_folded)
    condition = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    return _read(root, condition, [*params, limit], MAX_LISTED_MEMBERS, stores)


def concern_members(root: Path, concern_id: str, stores: VerifiedStores | None = None) -> StoredConcern | None:
    """The concern stored under `concern_id` with every member, or None when the store holds no such concern.

    Raises:
        PathEscapeError, ReviewStoreEscapeError, ReviewStoreUnavailable: as `open_store`, or a row is damaged.
    """
    found = _read(root, "WHERE c.concern_id = ?", [concern_id, 1], None, stores)
    return found[0] if found else None


def concern_ids(root: Path, keys: list[tuple[str, str]],
                stores: VerifiedStores | None = None) -> dict[tuple[str, str], str]:
    """(repository, record key) -> the id of the concern that record belongs to, for those that belong to one.

    Raises:
        PathEscapeError, ReviewStoreEscapeError, ReviewStoreUnavailable: as `open_store`.
    """
    if not keys:
        return {}
    store = open_store(root, stores)
    cursor = store.cursor()
    try:
        rows = cursor.execute(
            "SELECT r.repository, r.record_key, m.concern_id FROM s.concern_members m JOIN s.records r "
            "ON r.ordinal = m.ordinal WHERE list_contains(?, r.repository || chr(0) || r.record_key)",
            [[f"{repository}\x00{key}" for repository, key in keys]],
        ).fetchall()
    except READ_FAULTS as exc:
        raise ReviewStoreUnavailable(f"unreadable: {type(exc).__name__}") from exc
    finally:
        cursor.close()
    return {(str(repository), str(key)): str(concern) for repository, key, concern in rows}


def _read(root: Path, condition: str, params: list[object], listed: int | None,
          stores: VerifiedStores | None) -> list[StoredConcern]:
    store = open_store(root, stores)
    cursor = store.cursor()
    try:
        rows = cursor.execute(
            "SELECT c.concern_id, c.members, c.pull_requests, c.reviewers, c.repositories, c.first_seen, "  # noqa: S608
            f"c.last_seen, c.resolved, c.gate_passing, {EXCERPT_SQL}, t.channel, c.representative_ordinal "
            "FROM s.concerns c JOIN s.texts t ON t.ordinal = c.representative_ordinal "
            f"AND t.position = c.representative_position {condition} ORDER BY {_ORDER} LIMIT ?",
            params,
        ).fetchall()
        ids = [str(row[0]) for row in rows]
        members = cursor.execute(
            "SELECT m.concern_id, m.ordinal, r.repository, r.record_key, r.kind, r.pull_request, r.record_path "
            "FROM s.concern_members m JOIN s.records r ON r.ordinal = m.ordinal "
            "WHERE list_contains(?, m.concern_id) ORDER BY m.concern_id, m.ordinal",
            [ids],
        ).fetchall()
    except READ_FAULTS as exc:
        raise ReviewStoreUnavailable(f"unreadable: {type(exc).__name__}") from exc
    finally:
        cursor.close()
    by_concern: dict[str, list[tuple[int, ConcernMember]]] = {}
    for concern, ordinal, repository, key, kind, number, path in members:
        if kind not in KINDS:
            raise ReviewStoreUnavailable("damaged: a concern member holds a value outside its column's vocabulary")
        member = ConcernMember(str(repository), str(key), str(kind), int(number), str(path))
        by_concern.setdefault(str(concern), []).append((int(ordinal), member))
    return [_concern(row, by_concern.get(str(row[0]), []), listed) for row in rows]


def _concern(row: tuple[object, ...], members: list[tuple[int, ConcernMember]], listed: int | None) -> StoredConcern:
    (concern_id, count, pulls, reviewers, repositories, first, last, resolved, passing, excerpt, channel,
     representative) = row
    chosen = next((member for ordinal, member in members if ordinal == representative), None)
    if chosen is None or not all(isinstance(v, int) for v in (count, pulls, reviewers, repositories, resolved,
                                                              passing)):
        raise ReviewStoreUnavailable("damaged: a concern row does not match its members")
    every = [member for _, member in members]
    return StoredConcern(
        str(concern_id), int(str(count)), int(str(pulls)), int(str(reviewers)), int(str(repositories)),
        None if first is None else str(first), None if last is None else str(last), int(str(resolved)),
        int(str(passing)), str(excerpt), str(channel), chosen, every if listed is None else every[:listed],
    )
