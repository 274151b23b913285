"""The review store's embeddings: made at build (reusing the replaced store's where a record is unchanged), stored
as text rows the stamp digests, and read back into one matrix for `review.findSimilar`.

A vector is stored as base64 of its little-endian float16 values: a text column renders the same in the build's
lines and in a reader's digest (`review_digest.row_line`), and float16 halves the store at no cost to a ranking
that compares cosines to two decimals. A record is reused by its file's content hash: the same bytes give the same
text to embed, so the same vector, and a rebuild after an incremental ingest embeds only what changed.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

import orjson

from projection.concern_reuse import StoredClustering, stored_clustering, stored_facts
from projection.errors import ReviewStoreUnavailable
from projection.review_digest import row_line
from projection.review_layout import MODEL_COLUMNS, VECTOR_COLUMNS
from projection.review_rows import Projected, RecordFacts, ordinal_line
from projection.review_store import READ_FAULTS, fetched_rows, open_store
from projection.review_verify import stored_model
from theurian.embedding import EmbeddingModel, ModelIdentity
from theurian.errors import PathEscapeError
from theurian.stamped_store import VerifiedStores

if TYPE_CHECKING:
    # Imported where used: numpy's BLAS starts threads, and the build forks its readers only from a process with one.
    import numpy
    import numpy.typing

STORED_DTYPE: Final = "<f2"  # little-endian float16
_STORED_BYTES: Final = 2
_EMBED_BATCH: Final = 4_096  # texts embedded at once: bounds the memory of one batch, not the result
# What `row_line` renders of a `vectors` row between its ordinal and its vector text.
_VECTOR_HEAD: Final = orjson.dumps(VECTOR_COLUMNS[1]) + b":"


def encode_vector(vector: numpy.typing.NDArray[numpy.float32]) -> str:
    return base64.b64encode(vector.astype(STORED_DTYPE).tobytes()).decode("ascii")


def decode_vectors(encoded: Sequence[str], dimension: int) -> numpy.typing.NDArray[numpy.float32]:
    """(len(encoded), dimension) float32 from stored rows (each a strict base64 decode, read as float16).

    Raises:
        ReviewStoreUnavailable: a row is not base64 of `dimension` float16 values.
    """
    import numpy

    width = dimension * _STORED_BYTES
    try:
        # Strict, as `base64.b64decode(text, validate=True)` is; one array from all rows, not a row at a time.
        rows = [binascii.a2b_base64(text, strict_mode=True) for text in encoded]
    except (binascii.Error, ValueError):
        rows = [b""]
    if any(len(raw) != width for raw in rows):
        raise ReviewStoreUnavailable("damaged: a stored vector is not one of its model's")
    values = numpy.frombuffer(b"".join(rows), dtype=STORED_DTYPE).reshape(len(encoded), dimension)
    return values.astype(numpy.float32)


@dataclass(frozen=True)
class PreviousStore:
    """What a build takes over from the store it replaces: content hash → stored vector, its concern clustering,
    and content hash → the facts its concern stage read (`concern_reuse`)."""

    vectors: dict[str, str]
    clustering: StoredClustering | None
    facts: dict[str, RecordFacts]

    @classmethod
    def nothing(cls) -> PreviousStore:
        """Nothing to take over: every vector embedded, the clustering run, members' facts read from their files."""
        return cls({}, None, {})


def previous_store(root: Path, model: ModelIdentity, stores: VerifiedStores | None = None) -> PreviousStore:
    """From the store a build replaces, only a store this installation verifies, built with this very model: its
    vectors, its concern clustering and the facts its concern stage read; otherwise nothing (everything is embedded
    and clustered afresh, and members' facts are read from their files). `stores`: shared with the build's other
    reader of that store (`review_reuse.take_over`), so it is opened and verified once."""
    nothing = PreviousStore.nothing()
    try:
        store = open_store(root, stores)
    except (ReviewStoreUnavailable, PathEscapeError):
        return nothing
    cursor = store.cursor()
    try:
        if stored_model(cursor, "s.") != model:
            return nothing
        rows = fetched_rows(cursor.execute(
            "SELECT r.content_sha256, v.vector FROM s.vectors v JOIN s.records r ON r.ordinal = v.ordinal"
        ))
        clustering = stored_clustering(cursor, "s.")
        facts = stored_facts(cursor, "s.")
    except READ_FAULTS:
        return nothing
    finally:
        cursor.close()
    return PreviousStore(dict(rows), clustering, facts)  # both columns VARCHAR NOT NULL: str and str


@dataclass
class Embedded:
    """How many of a build's vectors were embedded and how many reused; `stored` is each embedded ordinal's stored
    vector text as written (what the concern stage clusters, so it reads nothing back)."""

    embedded: int = 0
    reused: int = 0
    stored: dict[int, str] = field(default_factory=dict)


def vector_lines(projected: Sequence[Projected], model: EmbeddingModel, previous: dict[str, str],
                 counts: Embedded, made_ahead: Mapping[str, str] | None = None) -> Iterator[bytes]:
    """The `vectors` rows of the sorted records, in ordinal order, embedding only what `previous` lacks.
    `made_ahead`: content hash → stored vector this build already embedded (`embedded_ahead`), counted as embedded."""
    ahead = made_ahead or {}
    wanted = [(ordinal, item) for ordinal, item in enumerate(projected) if item.embedding_text is not None]
    for start in range(0, len(wanted), _EMBED_BATCH):
        batch = wanted[start:start + _EMBED_BATCH]
        fresh = [item for _, item in batch if item.content_sha256 not in previous and item.content_sha256 not in ahead]
        vectors = model.embed([str(item.embedding_text) for item in fresh]) if fresh else None
        made = iter(range(len(fresh)))
        for ordinal, item in batch:
            stored = previous.get(item.content_sha256)
            if stored is None:
                stored = ahead.get(item.content_sha256)
                if stored is None:
                    assert vectors is not None
                    stored = encode_vector(vectors[next(made)])
                counts.embedded += 1
            else:
                counts.reused += 1
            counts.stored[ordinal] = stored
            yield vector_line(ordinal, stored)


def embedded_ahead(projected: Sequence[Projected], model: EmbeddingModel,
                   previous: Mapping[str, str]) -> dict[str, str]:
    """Content hash → stored vector of each of `projected` that `previous` lacks, embedded now (as `vector_lines`
    embeds them: a text's vector does not depend on the texts embedded beside it)."""
    fresh = {item.content_sha256: str(item.embedding_text) for item in projected
             if item.embedding_text is not None and item.content_sha256 not in previous}
    made: dict[str, str] = {}
    hashes = list(fresh)
    for start in range(0, len(hashes), _EMBED_BATCH):
        batch = hashes[start:start + _EMBED_BATCH]
        made.update(zip(batch, map(encode_vector, model.embed([fresh[sha] for sha in batch])), strict=True))
    return made


def vector_line(ordinal: int, stored: str) -> bytes:
    """`row_line(VECTOR_COLUMNS, (ordinal, stored))` byte for byte, without the dict it renders: orjson renders a
    string the same alone as inside an object. At 33,000 vectors 0.04 s where `row_line` took 0.24 s."""
    return ordinal_line(ordinal, b"%b%b}\n" % (_VECTOR_HEAD, orjson.dumps(stored)))


def model_line(identity: ModelIdentity) -> bytes:
    return row_line(MODEL_COLUMNS, (identity.name, identity.dimension, identity.weights_sha256))
