"""The one read `review.search` serves from: filtered records in the store's total order, each with its
excerpt cut in SQL.

Every filter is bound as a parameter, never spliced into the SQL. `q` is matched with `contains` over the
text folded as it is read (`FOLD_SQL`: the 26 ASCII letters, nothing else), so `%`, `_`, `*` and quotes are
ordinary characters, and nothing is ranked. The word-block index only narrows which records that exact test
runs on; it never decides a match. The excerpt is cut at `MAX_EXCERPT_CHARS` by the query itself, so the
daemon never materialises the whole of a long comment.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

import duckdb

from evidence.records import KINDS, THREAD_STATES
from projection.errors import ReviewStoreUnavailable
from projection.review_layout import BLOCK_RECORDS, CHANNELS, FOLD_SQL
from projection.review_pairs import PAIR_TABLE, pair_keys
from projection.review_store import READ_FAULTS, open_store
from theurian.stamped_store import VerifiedStores

MAX_EXCERPT_CHARS: Final = 280
# The first batch of candidate blocks read for `q`; each next batch is four times the last, so a broad `q`
# stops after a block or two and a rare one reaches every candidate in a handful of queries.
FIRST_BATCH_BLOCKS: Final = 2
CUT_MARK: Final = "..."

# The excerpt of a text row aliased `t`: its body cut at MAX_EXCERPT_CHARS characters and marked with CUT_MARK.
# The one definition of the cut review.search and review.listConcerns serve (records_at cuts a text in hand alike).
EXCERPT_SQL: Final = (
    f"CASE WHEN length(t.body) > {MAX_EXCERPT_CHARS} "
    f"THEN substr(t.body, 1, {MAX_EXCERPT_CHARS}) || '{CUT_MARK}' ELSE t.body END"
)
_PAGE_COLUMNS: Final = (
    "r.ordinal, r.record_path, r.record_key, r.kind, r.provider, r.repository, r.pull_request, "
    "r.thread_state, r.file_path, r.source_uri, r.author_id, r.author_login, r.last_seen_run_id, "
    "r.last_seen_at"
)


@dataclass(frozen=True)
class RecordFilter:
    """Already-validated filters; None means "no filter on this column". `q_folded` is ASCII-folded."""

    repository: str | None = None
    pull_request: int | None = None
    thread_state: str | None = None
    author: str | None = None
    file_path: str | None = None
    q_folded: str | None = None


@dataclass(frozen=True)
class StoredRecord:
    record_path: str
    record_key: str
    kind: str
    provider: str
    repository: str
    pull_request: int
    thread_state: str | None
    file_path: str | None
    source_uri: str
    author_id: str | None
    author_login: str | None
    last_seen_run_id: str | None
    last_seen_at: str | None
    excerpt: str  # already cut at MAX_EXCERPT_CHARS and marked, by the query
    excerpt_channel: str | None


def read_records(root: Path, where: RecordFilter, limit: int, *, indexed: bool = True,
                 stores: VerifiedStores | None = None) -> list[StoredRecord]:
    """Up to `limit` records matching every filter, in (repository, pull request, kind, record path) order.

    `indexed=False` answers `q` with one plain scan of every text instead: the reference the indexed read is
    proven equal to (tests/projection/test_review_index.py) and measured against (the benchmark). `stores`: the
    verify-once cache the store is opened through (`review_store.open_store`).

    Raises:
        PathEscapeError, ReviewStoreEscapeError: the store path escapes.
        ReviewStoreUnavailable: the store is absent, was not built here, is stale, unreadable or damaged, or a
            row it returned holds a value outside its column's vocabulary.
    """
    store = open_store(root, stores)
    cursor = store.cursor()
    try:
        if where.q_folded is None or not indexed:
            rows = cursor.execute(*_query(where, limit, None)).fetchall()
        else:
            rows = _search(cursor, where, limit)
    except READ_FAULTS as exc:
        raise ReviewStoreUnavailable(f"unreadable: {type(exc).__name__}") from exc
    finally:
        cursor.close()
    return [_shaped(row) for row in rows]


def _search(cursor: duckdb.DuckDBPyConnection, where: RecordFilter, limit: int) -> list[tuple[object, ...]]:
    """The `q` read: candidate blocks from the word-block and word-pair indexes (and the filters), then the exact
    query over them in order, batch by batch, stopping once `limit` rows are in hand.

    Batches follow the total order and each is read in that order, so their concatenation is the one ordered
    read the scan would make, cut at `limit`: the same rows, in the same order, whichever batch they came from.
    Where most of the blocks left in the candidates' span are candidates, the index narrows little and growing
    batches would read that span several times over: after the first batch (which a dense match fills), the rest
    is one read of the span, so the index never costs more than the scan it stands in for.
    """
    blocks = _candidate_blocks(cursor, where)
    rows: list[tuple[object, ...]] = []
    start, size = 0, FIRST_BATCH_BLOCKS
    while start < len(blocks) and len(rows) < limit:
        rest = blocks[start:]
        if start and len(rest) * 2 > rest[-1] - rest[0] + 1:
            rows += cursor.execute(*_query(where, limit - len(rows), rest, whole_span=True)).fetchall()
            break
        batch = blocks[start:start + size]
        rows += cursor.execute(*_query(where, limit - len(rows), batch)).fetchall()
        start, size = start + size, size * 4
    return rows


def _filters(where: RecordFilter) -> tuple[list[str], list[object]]:
    """The filters on `records` (alias r) other than `q`, as SQL clauses and their parameters."""
    clauses: list[str] = []
    params: list[object] = []
    for column, value in (("repository", where.repository), ("pull_request", where.pull_request),
                          ("thread_state", where.thread_state), ("author_id", where.author),
                          ("file_path", where.file_path)):
        if value is not None:
            clauses.append(f"r.{column} = ?")
            params.append(value)
    return clauses, params


def _candidate_blocks(cursor: duckdb.DuckDBPyConnection, where: RecordFilter) -> list[int]:
    """Every block that may hold a record matching `where`, in order: a superset, never a guess.

    A match of `q` in a text puts each whitespace-free piece of `q` inside one whitespace-separated word of that
    text, so a block whose word list lacks a piece cannot hold a match; and it puts each two neighbouring pieces
    in two adjacent words, so a block lacking their pair cannot either (`review_pairs.pair_keys`). With no piece
    to test (a `q` of whitespace only) or a NUL in `q` (the lists are NUL-joined), every block is a candidate as
    far as `q` goes. A block holding no record the other filters select is never one.
    """
    q = where.q_folded
    assert q is not None
    pieces = q.split()
    tests: list[str] = []
    params: list[object] = []
    pairs = ""
    if pieces and "\x00" not in q:
        keys = pair_keys(q)
        tests = ["contains(b.words, ?)"] * len(pieces) + ["contains(p.pairs, ?)"] * len(keys)
        params = [*pieces, *keys]
        pairs = f"JOIN s.{PAIR_TABLE} p ON p.block = b.block" if keys else ""
    clauses, filter_params = _filters(where)
    if clauses:
        tests.append(f"b.block IN (SELECT r.ordinal // {BLOCK_RECORDS} FROM s.records r "  # noqa: S608 - constants
                     f"WHERE {' AND '.join(clauses)})")
        params += filter_params
    condition = f"WHERE {' AND '.join(tests)}" if tests else ""
    sql = f"SELECT b.block FROM s.word_blocks b {pairs} {condition} ORDER BY b.block"  # noqa: S608
    return [int(str(row[0])) for row in cursor.execute(sql, params).fetchall()]


# The channel a matched record's excerpt comes from: the first that matched and holds text. Only an empty `q`
# matches an empty channel (it is a substring of every text); counting one would give a record with text an empty
# excerpt, and a record with none a channel, where the record holds no text (null, as without `q`). Taken in the
# same aggregate that finds the match (`arg_min` by position; a record's positions are distinct), so a `q` read is
# one join, where joining the texts a second time for the excerpt made the statement run ~1.7 x as long.
_FIRST_HIT: Final = "FILTER (WHERE t.body <> '')"
_MATCHED: Final = (
    f"SELECT t.ordinal, arg_min({EXCERPT_SQL}, t.position) {_FIRST_HIT} AS excerpt, "  # noqa: S608 - constants
    f"arg_min(t.channel, t.position) {_FIRST_HIT} AS channel FROM s.texts t"
)


def _query(where: RecordFilter, limit: int, blocks: list[int] | None,
           whole_span: bool = False) -> tuple[str, list[object]]:
    """The exact read: of every record when `blocks` is None, else of those blocks only (of every block from the
    first of them to the last when `whole_span`)."""
    clauses, params = _filters(where)
    if where.q_folded is None:
        return _unmatched_query(clauses, params, limit)
    if blocks is None:
        inside, inner = "", []
    else:
        # Only the batch's blocks are read: the ordinal range lets the scan skip by zone map, the list keeps
        # a block that is not a candidate out.
        low, high = blocks[0] * BLOCK_RECORDS, (blocks[-1] + 1) * BLOCK_RECORDS
        listed = "" if whole_span else "AND list_contains(?, t.ordinal // ?) "
        inside = f"t.ordinal >= ? AND t.ordinal < ? {listed}AND "
        inner = [low, high] + ([] if whole_span else [blocks, BLOCK_RECORDS])
        clauses[:0] = ["r.ordinal >= ?", "r.ordinal < ?"]
        params[:0] = [low, high]
    condition = ("WHERE " + " AND ".join(clauses)) if clauses else ""
    sql = (
        f"SELECT {_PAGE_COLUMNS.removeprefix('r.ordinal, ')}, m.excerpt, m.channel FROM s.records r "  # noqa: S608
        f"JOIN ({_MATCHED} WHERE {inside}contains({FOLD_SQL}, ?) GROUP BY t.ordinal) m ON m.ordinal = r.ordinal "
        f"{condition} ORDER BY r.ordinal LIMIT ?"
    )
    return sql, [*inner, where.q_folded, *params, limit]


def _unmatched_query(clauses: list[str], params: list[object], limit: int) -> tuple[str, list[object]]:
    """The read without `q`: each record's excerpt is its lead text (`lead_position`)."""
    condition = ("WHERE " + " AND ".join(clauses)) if clauses else ""
    sql = (
        f"WITH page AS (SELECT {_PAGE_COLUMNS}, r.lead_position AS excerpt_at FROM s.records r {condition} "  # noqa: S608
        f"ORDER BY r.ordinal LIMIT ?) "
        f"SELECT page.* EXCLUDE (ordinal, excerpt_at), {EXCERPT_SQL}, t.channel FROM page "
        f"LEFT JOIN s.texts t ON t.ordinal = page.ordinal AND t.position = page.excerpt_at "
        f"ORDER BY page.ordinal"
    )
    return sql, [*params, limit]


def _shaped(row: tuple[object, ...]) -> StoredRecord:
    (path, key, kind, provider, repository, pull_request, state, file_path, source_uri, author_id,
     author_login, run_id, seen_at, excerpt, channel) = row
    strings = (path, key, provider, repository, source_uri)
    optional = (file_path, author_id, author_login, run_id, seen_at)
    valid = (
        all(isinstance(value, str) for value in strings)
        and all(value is None or isinstance(value, str) for value in optional)
        and kind in KINDS
        and isinstance(pull_request, int) and 1 <= pull_request
        and (state in THREAD_STATES if kind == "review-thread" else state is None)
        and (file_path is not None) == (kind == "review-thread")
        and (channel is None and excerpt is None or channel in CHANNELS and isinstance(excerpt, str))
    )
    if not valid:
        raise ReviewStoreUnavailable("damaged: a served row holds a value outside its column's vocabulary")
    return StoredRecord(
        str(path), str(key), str(kind), str(provider), str(repository), int(str(pull_request)),
        None if state is None else str(state), None if file_path is None else str(file_path), str(source_uri),
        None if author_id is None else str(author_id), None if author_login is None else str(author_login),
        None if run_id is None else str(run_id), None if seen_at is None else str(seen_at),
        "" if excerpt is None else str(excerpt), None if channel is None else str(channel),
    )


def records_at(cursor: duckdb.DuckDBPyConnection, excerpts: dict[int, tuple[str, str]]) -> dict[int, StoredRecord]:
    """The records at these ordinals, each with the excerpt given for it ((text, channel), cut here as `q`'s
    excerpts are), shaped as `read_records` shapes its rows: for a ranked read that chose its own excerpts.

    Raises:
        ReviewStoreUnavailable: a row holds a value outside its column's vocabulary, or the read failed.
    """
    if not excerpts:
        return {}
    # One equality per record, UNION ALL'd: each is pushed into its scan and fetches only its own rows, where one
    # `IN`/`ANY` list scanned and decompressed every column of the table (13 ms against 3.6 ms for 5 of 100,000).
    wanted = sorted(excerpts)
    sql = " UNION ALL ".join([f"(SELECT {_PAGE_COLUMNS} FROM s.records r WHERE r.ordinal = ?)"] * len(wanted))  # noqa: S608 - our own names
    try:
        rows = cursor.execute(sql, wanted).fetchall()
    except READ_FAULTS as exc:
        raise ReviewStoreUnavailable(f"unreadable: {type(exc).__name__}") from exc
    found: dict[int, StoredRecord] = {}
    for ordinal, *values in rows:
        text, channel = excerpts[int(str(ordinal))]
        cut = text[:MAX_EXCERPT_CHARS] + CUT_MARK if len(text) > MAX_EXCERPT_CHARS else text
        found[int(str(ordinal))] = _shaped((*values, cut, channel))
    return found
