"""Recurring review concerns, found at build: review threads and review submissions whose meaning recurs across pull
requests, grouped (`concern_clusters`) and stored in the stamped store (`concerns`, `concern_members`).

What a concern is (docs/review-concerns.md has the measurements that chose each figure, on fixtures/concerns'
tuning half):

- its units are the records the store embeds (`vectors`) whose texts hold at least MIN_CONTENT_WORDS content words
  ("LGTM", "nit", "done" say nothing a team re-teaches);
- an average-linkage cluster at CONCERN_SIMILARITY of at least MIN_MEMBERS units from at least MIN_PULL_REQUESTS
  distinct pull requests (the same remark left on five lines of one pull request is not a recurrence);
- its id is `concern-` and 24 hex digits of the sha256 of its anchor, the member first written (by its creation
  time, then repository and record key): a pure function of the lake, so a copied lake gives the same ids, and a
  concern that gains a later thread keeps its anchor, so its id (docs/decisions.md, "Concern ids").
- its representative is the member nearest the members' mean vector, and the excerpt that member's text nearest
  it; the promotion gate is counted with the candidate's own stored signals (`knowledge.promotion_gate`).

The rows are digested as the build stamps every other table, in the stamp's order (`review_layout.DIGEST_TABLES`).
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import duckdb
import orjson

from evidence.errors import NotRegularFile
from evidence.lake_read import read_record_file
from evidence.records import KIND_REVIEW_THREAD, THREAD_RESOLVED, content_hash
from knowledge.promotion_gate import MET, stored_signals
from projection.concern_clusters import cluster
from projection.concern_reuse import StoredClustering, input_digest, insert_clustering, insert_facts
from projection.concern_screen import PARTS_PER_BILLION
from projection.errors import LakeChangedDuringBuildError
from projection.review_digest import LineDigest, row_line
from projection.review_layout import DIGEST_TABLES
from projection.review_rows import Projected, RecordFacts, record_facts
from projection.review_similar import STOP_WORDS
from projection.review_vectors import decode_vectors
from theurian.embedding import EmbeddingModel

if TYPE_CHECKING:
    import numpy
    import numpy.typing

    from projection.concern_ahead import ClusteringAhead

    # A clustering, and the decoded vectors of its units it was clustered from.
    Clustered = tuple[StoredClustering, numpy.typing.NDArray[numpy.float32]]

CONCERN_SIMILARITY: Final = 0.34
MIN_MEMBERS: Final = 3
MIN_PULL_REQUESTS: Final = 3
MIN_CONTENT_WORDS: Final = 5
CONCERN_ID_PREFIX: Final = "concern-"
CONCERN_ID_HEX: Final = 24
_ANCHOR_DOMAIN: Final = "theurian-review-concern/1\n"


@dataclass(frozen=True)
class Unit:
    """One member of a concern, read back from the loaded store."""

    ordinal: int
    record_key: str
    kind: str
    repository: str
    pull_request: int
    thread_state: str | None
    author_id: str | None


def concern_id(repository: str, record_key: str) -> str:
    """The id of the concern anchored at this record."""
    digest = hashlib.sha256(f"{_ANCHOR_DOMAIN}{repository}\n{record_key}".encode()).hexdigest()
    return CONCERN_ID_PREFIX + digest[:CONCERN_ID_HEX]


class ConcernsFound(NamedTuple):
    """What the concern stage stored: how many concerns, whether their clustering was taken over from the store
    the build replaces (`concern_reuse`) rather than computed, and whether it was computed ahead (`concern_ahead`)."""

    concerns: int
    clustering_reused: bool
    clustering_ahead: bool = False


def build_concerns(connection: duckdb.DuckDBPyConnection, digest: LineDigest, projected: Sequence[Projected],
                   model: EmbeddingModel, lake: Path, vectors: Mapping[int, str],
                   previous: StoredClustering | None, kept: Mapping[str, RecordFacts],
                   ahead: ClusteringAhead | None = None) -> ConcernsFound:
    """Cluster the loaded store's vectors into concerns, fill the concern tables, digest them.

    `lake` (resolved) is where a record an incremental build took over without reading is read for its facts.
    `vectors` is each embedded ordinal's stored vector text, as the build wrote it to `vectors` (so nothing is read
    back); `previous` the clustering of the store this build replaces, taken over when its input is this one's, and
    `kept` the facts it kept, by content hash; `ahead` a clustering started before the store was written
    (`concern_ahead`), used when its input is this one's.
    """
    facts = _Facts(projected, lake, kept)
    ordinals = concern_units(vectors, [item.words for item in projected])
    stored = [vectors[ordinal] for ordinal in ordinals]
    dimension = model.identity.dimension
    clustering, matrix, early = _clustering(stored, dimension, previous, ahead)
    recurring = [positions for positions in clustering.clusters if _recurs([ordinals[at] for at in positions],
                                                                           projected)]
    units = _units(connection, [ordinals[at] for positions in recurring for at in positions])
    centred = []
    for positions in recurring:
        members = [units[ordinals[at]] for at in positions]
        member_vectors = matrix[positions] if matrix is not None else decode_vectors([stored[at] for at in positions],
                                                                                     dimension)
        centred.append((members, *_centre(members, member_vectors)))
    texts = _texts(connection, [representative.ordinal for _, representative, _ in centred])
    found = [_concern(members, representative, _nearest_text(texts.get(representative.ordinal, []), centre, model),
                      facts) for members, representative, centre in centred]
    found.sort(key=lambda row: str(row[0]))
    _insert(connection, found)
    insert_clustering(connection, clustering)
    insert_facts(connection, facts.asked)
    _digest(connection, digest)
    return ConcernsFound(len(found), matrix is None, early)


def concern_units(vectors: Mapping[int, str], words: Sequence[str]) -> list[int]:
    """The ordinals the clustering reads, ascending: those embedded (`vectors`, by ordinal) whose words (`words`,
    each ordinal's `Projected.words`) say something."""
    return [ordinal for ordinal in sorted(vectors) if _says_something(words[ordinal])]


def clustered(stored: list[str], dimension: int, digest: str | None = None) -> Clustered:
    """The clusters of the units whose stored vectors are `stored` (of `digest`, its `input_digest` when known),
    clustered afresh from the decoded vectors, and those vectors."""
    matrix = decode_vectors(stored, dimension)
    digest = digest or input_digest(stored, CONCERN_SIMILARITY)
    return StoredClustering(digest, len(stored), cluster(matrix, CONCERN_SIMILARITY)), matrix


def _clustering(stored: list[str], dimension: int, previous: StoredClustering | None, ahead: ClusteringAhead | None
                ) -> tuple[StoredClustering, numpy.typing.NDArray[numpy.float32] | None, bool]:
    """The clusters of the units whose stored vectors are `stored`: `previous` when its input was this very one
    (then no matrix: nothing was decoded), `ahead`'s when its input was, else clustered afresh; and whether it was
    `ahead`'s."""
    digest = input_digest(stored, CONCERN_SIMILARITY)
    if previous is not None and previous.reusable_for(digest, len(stored)):
        return previous, None, False
    found = ahead.clustering_for(digest, len(stored)) if ahead is not None else None
    if found is not None:
        return (*found, True)
    return (*clustered(stored, dimension, digest), False)


def _recurs(ordinals: list[int], projected: Sequence[Projected]) -> bool:
    """At least MIN_MEMBERS units from at least MIN_PULL_REQUESTS distinct pull requests (a record's sort key opens
    with its repository and pull request)."""
    return len(ordinals) >= MIN_MEMBERS and \
        len({projected[ordinal].sort_key[:2] for ordinal in ordinals}) >= MIN_PULL_REQUESTS


def _units(connection: duckdb.DuckDBPyConnection, ordinals: list[int]) -> dict[int, Unit]:
    """The concerns' members, read from the loaded store by ordinal."""
    rows = connection.execute(
        "SELECT ordinal, record_key, kind, repository, pull_request, thread_state, author_id FROM records "
        "WHERE ordinal IN (SELECT unnest(?::BIGINT[]))", [ordinals]
    ).fetchall()
    return {int(row[0]): Unit(int(row[0]), str(row[1]), str(row[2]), str(row[3]), int(row[4]), row[5], row[6])
            for row in rows}


def _says_something(words: str) -> bool:
    count = 0
    for word in words.split("\x00"):
        if word and word.isalnum() and word not in STOP_WORDS:
            count += 1
            if count >= MIN_CONTENT_WORDS:
                return True
    return False


def _centre(members: list[Unit],
            vectors: numpy.typing.NDArray[numpy.float32]) -> tuple[Unit, numpy.typing.NDArray[numpy.float64]]:
    """The member nearest the members' mean vector (the first of equals: the lowest ordinal), and that mean."""
    import numpy

    exact = vectors.astype(numpy.float64)
    centre = exact.mean(axis=0)
    closeness = numpy.rint(exact @ centre * PARTS_PER_BILLION).astype(numpy.int64)
    return members[int(numpy.argmax(closeness))], centre


def _concern(members: list[Unit], representative: Unit, position: int, facts: _Facts) -> tuple[Any, ...]:
    created = [facts.of(u.ordinal).created_at for u in members]
    anchor = min(members, key=lambda u: (facts.of(u.ordinal).created_at or "\uffff", u.repository, u.record_key))
    seen = sorted(when for when in created if when)
    return (
        concern_id(anchor.repository, anchor.record_key), anchor.ordinal, representative.ordinal, position,
        len(members), len({(u.repository, u.pull_request) for u in members}),
        len({u.author_id for u in members if u.author_id is not None}), len({u.repository for u in members}),
        seen[0] if seen else None, seen[-1] if seen else None,
        sum(1 for u in members if u.thread_state == THREAD_RESOLVED),
        sum(1 for u in members if _passes_gate(u, facts)),
        [u.ordinal for u in members],
    )


def _texts(connection: duckdb.DuckDBPyConnection, ordinals: list[int]) -> dict[int, list[tuple[int, str]]]:
    """The (position, body) texts holding any text of each record at `ordinals`, in position order: one query for
    every concern's representative."""
    found: dict[int, list[tuple[int, str]]] = {}
    rows = connection.execute(
        "SELECT ordinal, position, body FROM texts WHERE ordinal IN (SELECT unnest(?::BIGINT[])) AND body <> '' "
        "ORDER BY ordinal, position", [ordinals]
    ).fetchall()
    for ordinal, position, body in rows:
        found.setdefault(int(ordinal), []).append((int(position), str(body)))
    return found


def _nearest_text(texts: list[tuple[int, str]], centre: numpy.typing.NDArray[numpy.float64],
                  model: EmbeddingModel) -> int:
    """The position of the representative's text nearest the concern's centre (the first of equals)."""
    import numpy

    if len(texts) < 2:
        return texts[0][0] if texts else 0
    scores = model.embed([body for _, body in texts]).astype(numpy.float64) @ centre
    return texts[int(numpy.argmax(numpy.round(scores, 6)))][0]


def _passes_gate(unit: Unit, facts: _Facts) -> bool:
    """Whether the thread passes the candidate's five stored signals, computed by the gate itself."""
    if unit.kind != KIND_REVIEW_THREAD:
        return False
    projected = facts.projected
    item = projected[unit.ordinal]
    pull = _pull_request_ordinal(projected, unit.repository, unit.pull_request)
    thread = {"state": unit.thread_state, "comments": item.text_tails, "pullRequest": unit.pull_request}
    pull_facts = None if pull is None else facts.of(pull)
    pull_record = None if pull_facts is None else {"merged": pull_facts.merged, "state": "",
                                                   "statusCheckRollupState": pull_facts.ci_state}
    signals = stored_signals(thread, "", pull_record, None if pull is None else "")
    return all(signal.outcome == MET for signal in signals)


def _pull_request_ordinal(projected: Sequence[Projected], repository: str, number: int) -> int | None:
    """The ordinal of the pull-request record of (repository, number), if stored: the sorted rows put a pull
    request first in its run, and a row's ordinal is its place in them."""
    key = (repository, number, 0, "")
    start = bisect.bisect_left(projected, key, key=lambda item: item.sort_key)
    if start < len(projected) and projected[start].sort_key[:3] == (repository, number, 0):
        return start
    return None


def _insert(connection: duckdb.DuckDBPyConnection, found: list[tuple[Any, ...]]) -> None:
    if not found:
        return
    columns = list(zip(*(row[:-1] for row in found), strict=True))
    values = ", ".join(f"unnest(?::{kind}[])" for kind in _COLUMN_TYPES)
    connection.execute(f"INSERT INTO concerns SELECT {values}", [list(column) for column in columns])
    ids = [row[0] for row in found for _ in row[-1]]
    ordinals = [ordinal for row in found for ordinal in row[-1]]
    connection.execute("INSERT INTO concern_members SELECT unnest(?::VARCHAR[]), unnest(?::BIGINT[])", [ids, ordinals])


_TABLES: Final = ("concerns", "concern_members", "concern_input", "concern_clusters", "concern_facts")
_COLUMN_TYPES: Final = ("VARCHAR", "BIGINT", "BIGINT", "INTEGER", "INTEGER", "INTEGER", "INTEGER", "INTEGER",
                        "VARCHAR", "VARCHAR", "INTEGER", "INTEGER")


def _digest(connection: duckdb.DuckDBPyConnection, digest: LineDigest) -> None:
    for table, columns, order in (entry for entry in DIGEST_TABLES if entry[0] in _TABLES):
        digest.table(table)
        cursor = connection.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}")  # noqa: S608
        while batch := cursor.fetchmany(8192):
            for values in batch:
                digest.line(row_line(columns, values))


class _Facts:
    """Each record's `RecordFacts` by ordinal: as its build projected them, or, for a record an incremental build
    took over from the store it replaces, as that store kept them for the same content hash (`kept`), else read from
    its file (unchanged since: the facts a full build reads, either way). `asked` holds every answer given, by content
    hash: what the new store keeps."""

    def __init__(self, projected: Sequence[Projected], lake: Path,
                 kept: Mapping[str, RecordFacts] | None = None) -> None:
        self.projected = projected
        self._lake = lake
        self._kept = kept or {}
        self._read: dict[int, RecordFacts] = {}
        self.asked: dict[str, RecordFacts] = {}

    def of(self, ordinal: int) -> RecordFacts:
        item = self.projected[ordinal]
        found = item.facts or self._kept.get(item.content_sha256) or self._from_file(ordinal)
        self.asked[item.content_sha256] = found
        return found

    def _from_file(self, ordinal: int) -> RecordFacts:
        if ordinal not in self._read:
            item = self.projected[ordinal]
            record_path = item.sort_key[3]
            try:
                data = read_record_file(self._lake, record_path)
            except (NotRegularFile, OSError):
                raise LakeChangedDuringBuildError(record_path) from None
            # The bytes the store it replaces was built from, or the facts would be another record's.
            if not hmac.compare_digest(content_hash(data), item.content_sha256):
                raise LakeChangedDuringBuildError(record_path)
            self._read[ordinal] = record_facts(orjson.loads(data))
        return self._read[ordinal]
