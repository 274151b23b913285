"""The `dense` channel: every indexed item's embedding (theurian/embedding.py), stored in the index file.

At build time each item's title and body are embedded into one L2-normalised float32 row; the rows (in item-id
order) go into `dense_matrix` as one blob, the ids into `dense_items`, the model's identity and a sha256 over
identity, ids and bytes into `meta`, and that digest into the index pointer. A search loads the matrix once per
index file (the file is immutable; the digest is checked on load), and proposes the items whose cosine with the
query is at least the tuned floor (knowledge/fusion.py), best first: a query the index holds nothing
about gets no dense candidates rather than the least-bad ones.

The index offers `dense` only to a daemon whose model has the identity the index was built with: vectors of
another model are not comparable with its query vectors, so a mismatching index answers with its word channels.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy
import numpy.typing

from knowledge.in_memory import BuildCache, top_rows
from theurian.embedding import EmbeddingModel, ModelIdentity

Matrix = numpy.typing.NDArray[numpy.float32]



@dataclass(frozen=True)
class DenseVectors:
    identity: ModelIdentity
    item_ids: tuple[str, ...]
    matrix: Matrix  # (len(item_ids), dimension), rows unit length (or zero)
    digest: str  # digest_of(identity, item_ids, matrix)


def item_text(title: str, body: str) -> str:
    """What an item's vector is made from: its title, then its body."""
    return f"{title}\n{body}"


def digest_of(identity: ModelIdentity, item_ids: Sequence[str], matrix: Matrix) -> str:
    """sha256 over the model identity, the item ids in order and the matrix bytes: the vectors' identity."""
    digest = hashlib.sha256()
    digest.update(f"{identity.name}\n{identity.dimension}\n{identity.weights_sha256}\n".encode())
    digest.update("\n".join(item_ids).encode("utf-8"))
    digest.update(b"\n")
    digest.update(numpy.ascontiguousarray(matrix, dtype="<f4").tobytes())
    return digest.hexdigest()


def write_dense(index: sqlite3.Connection, model: EmbeddingModel, rows: Sequence[tuple[str, str, str]]) -> DenseVectors:
    """Embed `rows` ((item_id, title, body), item-id order) and store them; returns what was stored."""
    item_ids = tuple(row[0] for row in rows)
    matrix = model.embed([item_text(title, body) for _, title, body in rows]) if rows else _empty(model)
    identity = model.identity
    digest = digest_of(identity, item_ids, matrix)
    index.execute("CREATE TABLE dense_items (ord INTEGER PRIMARY KEY, item_id TEXT NOT NULL)")
    index.execute("CREATE TABLE dense_matrix (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
    index.executemany("INSERT INTO dense_items VALUES (?, ?)", list(enumerate(item_ids)))
    index.execute("INSERT INTO dense_matrix VALUES (1, ?)", (numpy.ascontiguousarray(matrix, "<f4").tobytes(),))
    index.executemany(
        "INSERT INTO meta VALUES (?, ?)",
        [
            ("model_name", identity.name),
            ("model_dimension", str(identity.dimension)),
            ("model_weights_sha256", identity.weights_sha256),
            ("dense_sha256", digest),
        ],
    )
    return DenseVectors(identity, item_ids, matrix, digest)


def _empty(model: EmbeddingModel) -> Matrix:
    return numpy.zeros((0, model.identity.dimension), dtype=numpy.float32)


_cache: BuildCache[DenseVectors | None] = BuildCache()


def load_dense(index: sqlite3.Connection, build_id: str, digest: str) -> DenseVectors | None:
    """The index's vectors (cached per build and digest), or None when they do not match the digest the pointer
    recorded — damage, which leaves the word channels answering."""
    return _cache.get(build_id, digest, lambda: _read(index, digest))


def _read(index: sqlite3.Connection, digest: str) -> DenseVectors | None:
    meta = dict(index.execute("SELECT key, value FROM meta WHERE key LIKE 'model_%'").fetchall())
    blob = index.execute("SELECT data FROM dense_matrix WHERE id = 1").fetchone()
    try:
        identity = ModelIdentity(meta["model_name"], int(meta["model_dimension"]), meta["model_weights_sha256"])
    except (KeyError, ValueError):
        return None
    item_ids = tuple(row[0] for row in index.execute("SELECT item_id FROM dense_items ORDER BY ord"))
    if blob is None or len(blob[0]) != len(item_ids) * identity.dimension * 4:
        return None
    matrix = numpy.frombuffer(blob[0], dtype="<f4").reshape(len(item_ids), identity.dimension)
    if digest_of(identity, item_ids, matrix) != digest:
        return None
    return DenseVectors(identity, item_ids, matrix.astype(numpy.float32, copy=False), digest)


def cosines(matrix: Matrix, vector: Matrix) -> Matrix:
    """Each row's dot product with `vector` (the cosine: both are unit length). einsum, not `@`: a matrix-vector
    product through OpenBLAS spreads over every core, and on a loaded two-core machine that was 5x slower (36 ms
    against 7 ms p50 at 30,000 rows) than this single-threaded loop."""
    result: Matrix = numpy.einsum("ij,j->i", matrix, vector)
    return result


def dense_channel(vectors: DenseVectors, query_vector: Matrix, depth: int, floor: float) -> list[str]:
    """Item ids whose cosine with the query is at least `floor`, best first (ties by item id), at most depth."""
    if not vectors.item_ids or not query_vector.any():
        return []
    scores = cosines(vectors.matrix, query_vector)
    # Rows are in item-id order, so the row number breaks a tie by item id.
    ordered = top_rows(numpy.flatnonzero(scores >= floor), scores, depth)
    return [vectors.item_ids[row] for row in ordered.tolist()]
