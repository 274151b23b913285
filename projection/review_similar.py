"""The read `review.findSimilar` serves: the review threads and review submissions nearest a described situation.

Ranking (docs/review-similar.md has the measurements that chose each figure, on fixtures/similar's tuning half):

1. Dense: the situation is embedded by the installation's model (`theurian.embedding`) and compared by cosine with
   every stored vector matching the exact filters: an exact scan of one in-memory matrix (read through an int8
   copy whose error is bounded, `projection.review_scan`), loaded once per store file. The CANDIDATES nearest go on.
   A situation with no content word (`content_words`: only punctuation, symbols, spaces or stop words), or with no
   token the model has a vector for, is refused (`SituationWithoutWords`) before anything is compared: the mean of
   punctuation tokens lands near some record by chance, just above the floor, and an empty answer would say a
   comparison was made.
2. "Nothing like this": when even the nearest candidate's cosine is below SIMILARITY_FLOOR, the answer is empty —
   not the least-bad few.
3. Lexical: each candidate gains LEXICAL_WEIGHT × the share of the situation's content words its text holds. A
   light touch: on the labelled set a plain reciprocal-rank fusion with BM25 ranked worse than dense alone.

Ties at every step fall back to the store's total order (the ordinal), so one store and one situation give the same
answer every time. The excerpt is the record's text channel nearest the situation (a thread's best comment).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import duckdb

from evidence.records import KIND_REVIEW_SUBMISSION, KIND_REVIEW_THREAD
from projection.errors import ReviewStoreUnavailable, SituationWithoutWords
from projection.review_query import StoredRecord, records_at
from projection.review_scan import QuantisedMatrix
from projection.review_store import READ_FAULTS, OpenStore, open_store
from projection.review_vectors import decode_vectors
from projection.review_verify import stored_model
from theurian.embedding import EmbeddingModel, ModelIdentity, load_model
from theurian.stamp import OTHER_MODEL, STAMP_TABLE
from theurian.stamped_store import VerifiedStores
from theurian.text import ascii_fold

EMBEDDED_KINDS: Final = (KIND_REVIEW_THREAD, KIND_REVIEW_SUBMISSION)
CANDIDATES: Final = 30
SIMILARITY_FLOOR: Final = 0.32
LEXICAL_WEIGHT: Final = 0.30
FOUND_DENSE: Final = "dense"
FOUND_LEXICAL: Final = "lexical"
# Words too common in review prose to say what a situation is about.
STOP_WORDS: Final = frozenset(
    "a an the and or of to in on for is it this that with as at by be are was if we our you your i my not no so do "
    "does from into then than but can will would should could has have had its their there here what which when who "
    "how all any each every one two up out about just only also more most some such own same other".split()
)
# A run of letters or digits in any script (`\w` less the underscore): "ロック順序" and "Überlauf" are words too.
_WORD: Final = re.compile(r"[^\W_]+")
if TYPE_CHECKING:
    # numpy is imported where it is used: importing the tool registry (as `review build` does, for a refusal's words)
    # must start no BLAS thread, or the build could not fork its readers (`theurian.forked.fork_is_safe`).
    import numpy
    import numpy.typing

    Vector = numpy.typing.NDArray[numpy.float32]


@dataclass(frozen=True)
class SimilarFilter:
    """Already-validated exact filters; None means "no filter on this column"."""

    repository: str | None = None
    file_path: str | None = None
    thread_state: str | None = None
    kind: str | None = None


@dataclass(frozen=True)
class SimilarHit:
    record: StoredRecord
    similarity: float  # the cosine, clipped to 0..1
    fused_score: float
    found_by: tuple[str, ...]


@dataclass(frozen=True)
class SimilarAnswer:
    hits: list[SimilarHit]
    model: ModelIdentity
    build_id: str
    compared: int  # how many embedded units the exact filters admitted: 0 says the filters matched nothing


class SimilarIndex:
    """One store's vectors as a matrix in ordinal order, with the filter columns dictionary-coded beside it."""

    def __init__(self, model: ModelIdentity, build_id: str, ordinals: numpy.typing.NDArray[numpy.int64],
                 matrix: Vector, columns: tuple[Sequence[object], ...],
                 texts: Sequence[list[tuple[str, str]]]) -> None:
        """`columns`: each vector's kind, repository, thread state and file path; `texts`: each one's (channel,
        body) texts in position order; both in the matrix's row order."""
        self.model, self.build_id, self.ordinals, self.matrix = model, build_id, ordinals, matrix
        self._columns = [_Coded(values) for values in columns]
        self.scan = QuantisedMatrix(matrix)  # the exact scan, read through int8 (projection.review_scan)
        # Held in memory: DuckDB decompresses a whole zstd segment to hand back one body, which cost more than the
        # whole scan (tens of ms for 30 candidates at 100,000 units; docs/review-similar.md).
        self._texts = texts

    def texts_of(self, ordinal: int) -> list[tuple[str, str]]:
        """The (channel, body) texts of the unit at `ordinal`, in position order."""
        import numpy

        return self._texts[int(numpy.searchsorted(self.ordinals, ordinal))]

    @classmethod
    def load(cls, cursor: duckdb.DuckDBPyConnection) -> SimilarIndex:
        """The index of the store attached as `s`.

        Raises:
            ReviewStoreUnavailable: the store has no model row or build id, or a vector is not its model's.
        """
        import numpy

        model = stored_model(cursor, "s.")
        stamp = cursor.execute(f"SELECT build_id FROM s.{STAMP_TABLE}").fetchone()  # noqa: S608 - our own names
        if model is None or stamp is None:
            raise ReviewStoreUnavailable("damaged: no embedding model or build id")
        rows = cursor.execute(
            "SELECT v.ordinal, v.vector, r.kind, r.repository, r.thread_state, r.file_path FROM s.vectors v "
            "JOIN s.records r ON r.ordinal = v.ordinal ORDER BY v.ordinal"
        ).fetchall()
        ordinals = numpy.array([int(str(row[0])) for row in rows], dtype=numpy.int64)
        matrix = decode_vectors([str(row[1]) for row in rows], model.dimension)
        columns = ([row[2] for row in rows], [row[3] for row in rows], [row[4] for row in rows],
                   [row[5] for row in rows])
        texts: list[list[tuple[str, str]]] = [[] for _ in rows]
        at = {ordinal: position for position, ordinal in enumerate(ordinals.tolist())}
        read = cursor.execute(
            "SELECT t.ordinal, t.channel, t.body FROM s.texts t SEMI JOIN s.vectors v ON v.ordinal = t.ordinal "
            "ORDER BY t.ordinal, t.position"
        )
        while batch := read.fetchmany(8192):
            for ordinal, channel, body in batch:
                texts[at[int(str(ordinal))]].append((str(channel), str(body)))
        return cls(model, str(stamp[0]), ordinals, matrix, columns, texts)

    def __len__(self) -> int:
        return len(self.ordinals)

    def nearest(self, query: Vector, where: SimilarFilter, count: int) -> tuple[list[tuple[int, float]], int]:
        """Up to `count` (ordinal, cosine) matching `where`, nearest first, ties in ordinal order; and how many units
        `where` admitted."""
        allowed: numpy.typing.NDArray[numpy.bool_] | None = None
        wanted = (where.kind, where.repository, where.thread_state, where.file_path)
        for column, value in zip(self._columns, wanted, strict=True):
            if value is not None:
                allowed = column.equals(value) if allowed is None else allowed & column.equals(value)
        picked, scores, _ = self.scan.nearest(query, allowed, count)
        compared = len(self.ordinals) if allowed is None else int(allowed.sum())
        return [(int(self.ordinals[at]), float(score)) for at, score in zip(picked, scores, strict=True)], compared


class _Coded:
    """A column of strings (or nulls) as small integer codes and the vocabulary they index."""

    def __init__(self, values: Sequence[object]) -> None:
        import numpy

        vocabulary: dict[object, int] = {}
        self.codes = numpy.array([vocabulary.setdefault(value, len(vocabulary)) for value in values], dtype=numpy.int32)
        self.vocabulary = vocabulary

    def equals(self, value: str) -> numpy.typing.NDArray[numpy.bool_]:
        import numpy

        code = self.vocabulary.get(value)
        return self.codes == code if code is not None else numpy.zeros(len(self.codes), dtype=bool)


_indexes: dict[str, tuple[OpenStore, SimilarIndex]] = {}
_indexes_lock = threading.Lock()


def similar_index(root: Path, stores: VerifiedStores | None = None) -> tuple[OpenStore, SimilarIndex]:
    """The project's verified store and its vectors, loaded once per store file.

    Raises:
        PathEscapeError, ReviewStoreEscapeError, ReviewStoreUnavailable: as `open_store`.
    """
    store = open_store(root, stores)
    key = str(root.resolve())
    with _indexes_lock:
        cached = _indexes.get(key)
        if cached is not None and cached[0] is store:
            return cached
        cursor = store.cursor()
        try:
            index = SimilarIndex.load(cursor)
        except READ_FAULTS as exc:
            raise ReviewStoreUnavailable(f"unreadable: {type(exc).__name__}") from exc
        finally:
            cursor.close()
        _indexes[key] = (store, index)
        return store, index


def find_similar(root: Path, situation: str, where: SimilarFilter, limit: int,
                 stores: VerifiedStores | None = None) -> SimilarAnswer:
    """At most `limit` records nearest `situation` under `where`; empty when nothing is near enough.

    Raises:
        SituationWithoutWords: `situation` holds no word to compare by (checked before the store is opened), or
            none the model has a vector for.
        PathEscapeError, ReviewStoreEscapeError, ReviewStoreUnavailable: as `open_store`.
    """
    wanted = content_words(situation)
    if not wanted:  # the one rule for what can be compared: the tool and `theurian review similar` both meet it
        raise SituationWithoutWords
    store, index = similar_index(root, stores)
    model = load_model()
    if model.identity != index.model:
        # The installation config now names another model than the one this store was verified against.
        raise ReviewStoreUnavailable(OTHER_MODEL)
    query = model.embed([situation])[0]
    if not query.any():  # no token of it is in the model's vocabulary: its words have no vector behind them
        raise SituationWithoutWords
    nearest, compared = index.nearest(query, where, CANDIDATES)
    if not nearest or nearest[0][1] < SIMILARITY_FLOOR:
        return SimilarAnswer([], index.model, index.build_id, compared)
    scored = []
    for ordinal, cosine in nearest:
        share = lexical_share(wanted, index.texts_of(ordinal))
        similarity = min(1.0, max(0.0, cosine))
        scored.append((similarity + LEXICAL_WEIGHT * share, ordinal, similarity, share))
    scored.sort(key=lambda item: (-item[0], item[1]))
    kept = scored[:limit]
    excerpts = best_texts(model, query, {ordinal: index.texts_of(ordinal) for _, ordinal, _, _ in kept})
    cursor = store.cursor()
    try:
        records = records_at(cursor, excerpts)
    finally:
        cursor.close()
    hits = [
        SimilarHit(records[ordinal], round(similarity, 6), round(fused, 6),
                   (FOUND_DENSE, FOUND_LEXICAL) if share > 0 else (FOUND_DENSE,))
        for fused, ordinal, similarity, share in kept if ordinal in records
    ]
    return SimilarAnswer(hits, index.model, index.build_id, compared)


def content_words(text: str) -> frozenset[str]:
    """The folded words of `text` that say what it is about (runs of letters and digits, no stop word)."""
    return frozenset(word for word in _WORD.findall(ascii_fold(text)) if word not in STOP_WORDS)


def lexical_share(wanted: frozenset[str], texts: list[tuple[str, str]]) -> float:
    """The share of `wanted` that a record's texts hold (0 when nothing is wanted)."""
    if not wanted:
        return 0.0
    held = content_words("\n".join(body for _, body in texts))
    return len(wanted & held) / len(wanted)


def best_texts(model: EmbeddingModel, query: Vector,
               texts: dict[int, list[tuple[str, str]]]) -> dict[int, tuple[str, str]]:
    """Per record, (body, channel) of its text nearest `query` (the first of equals; ("", channel) for a record
    with none), every record's texts embedded in one call: one tokenizer pass per answer, not one per record."""
    import numpy

    present = {ordinal: [(channel, body) for channel, body in listed if body] for ordinal, listed in texts.items()}
    bodies = [body for listed in present.values() for _, body in listed]
    scores = model.embed(bodies) @ query if bodies else numpy.zeros(0, dtype=numpy.float32)
    best: dict[int, tuple[str, str]] = {}
    start = 0
    for ordinal, listed in present.items():
        if not listed:
            best[ordinal] = "", texts[ordinal][0][0] if texts[ordinal] else "comment"
            continue
        channel, body = listed[int(numpy.argmax(scores[start:start + len(listed)]))]
        best[ordinal] = body, channel  # argmax takes the first of equal maxima
        start += len(listed)
    return best
