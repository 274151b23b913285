"""The summary tree in the index file, its digest, and the `summary` channel a search reads from it.

Tables: `raptor_nodes` (position, id, level, parent position, title, summary), `raptor_members` (a level-1 node's
items, as rows of `dense_items`) and `raptor_matrix` (each node's summary vector, one blob). The digest (sha256
over all three) is recorded in the index pointer and checked when a search first loads the tree; a tree that
does not match it is not used, and the index answers without `summary`.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy

from knowledge.dense import DenseVectors, Matrix, cosines
from knowledge.in_memory import BuildCache, top_rows
from knowledge.raptor import build_tree, summary_of
from theurian.embedding import EmbeddingModel

# The query is matched against every level-1 summary; the items under the best few (at the tuned floor or above,
# knowledge/fusion.py) are the channel's candidates.
SUMMARY_NODES: Final = 3


@dataclass(frozen=True)
class Tree:
    leaves: tuple[int, ...]  # positions of the level-1 nodes, in node order
    leaf_rows: tuple[tuple[int, ...], ...]  # each level-1 node's items (rows of the dense matrix), in item order
    leaf_matrix: Matrix  # the level-1 summaries' vectors
    paths: dict[str, list[dict[str, Any]]]  # item id -> its ancestry, level 3 first


def write_raptor(
    index: sqlite3.Connection, model: EmbeddingModel, vectors: DenseVectors, texts: Sequence[tuple[str, str, str]]
) -> str:
    """Build the tree over the indexed items and store it; returns its digest."""
    nodes = build_tree(model, vectors, texts)
    index.execute(
        "CREATE TABLE raptor_nodes (position INTEGER PRIMARY KEY, node_id TEXT NOT NULL, level INTEGER NOT NULL, "
        "parent INTEGER, title TEXT NOT NULL, summary TEXT NOT NULL)"
    )
    index.execute("CREATE TABLE raptor_members (node INTEGER NOT NULL, item INTEGER NOT NULL)")
    index.execute("CREATE TABLE raptor_matrix (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
    node_rows = [(p, n.node_id, n.level, n.parent, n.title, summary_of(n)) for p, n in enumerate(nodes)]
    member_rows = [(p, row) for p, n in enumerate(nodes) if n.level == 1 for row in n.members]
    summaries = [summary_of(n) for n in nodes]
    matrix = model.embed(summaries) if summaries else numpy.zeros((0, vectors.matrix.shape[1]), numpy.float32)
    blob = numpy.ascontiguousarray(matrix, "<f4").tobytes()
    index.executemany("INSERT INTO raptor_nodes VALUES (?, ?, ?, ?, ?, ?)", node_rows)
    index.executemany("INSERT INTO raptor_members VALUES (?, ?)", member_rows)
    index.execute("INSERT INTO raptor_matrix VALUES (1, ?)", (blob,))
    return _digest(node_rows, member_rows, blob)


def _digest(node_rows: Sequence[tuple[Any, ...]], member_rows: Sequence[tuple[int, int]], blob: bytes) -> str:
    digest = hashlib.sha256()
    for row in node_rows:
        digest.update(repr(row).encode("utf-8"))
    digest.update(repr(list(member_rows)).encode())
    digest.update(blob)
    return digest.hexdigest()


_cache: BuildCache[Tree | None] = BuildCache()


def load_tree(index: sqlite3.Connection, build_id: str, digest: str, vectors: DenseVectors) -> Tree | None:
    """The index's tree (cached per build and digest), or None when it does not match the recorded digest."""
    return _cache.get(build_id, digest, lambda: _read(index, digest, vectors))


def _read(index: sqlite3.Connection, digest: str, vectors: DenseVectors) -> Tree | None:
    node_rows = index.execute("SELECT * FROM raptor_nodes ORDER BY position").fetchall()
    member_rows = index.execute("SELECT node, item FROM raptor_members ORDER BY rowid").fetchall()
    blob = index.execute("SELECT data FROM raptor_matrix WHERE id = 1").fetchone()
    if blob is None or _digest(node_rows, member_rows, blob[0]) != digest:
        return None
    dimension = vectors.identity.dimension
    if len(blob[0]) != len(node_rows) * dimension * 4 or any(
        not 0 <= i < len(vectors.item_ids) for _, i in member_rows
    ):
        return None
    matrix = numpy.frombuffer(blob[0], dtype="<f4").reshape(len(node_rows), dimension)
    chain: dict[int, list[dict[str, Any]]] = {}
    for position, node_id, level, parent, title, _summary in node_rows:
        chain[position] = [*chain.get(parent, []), {"nodeId": node_id, "level": level, "title": title}]
    leaves = tuple(row[0] for row in node_rows if row[2] == 1)
    items: dict[int, list[int]] = {leaf: [] for leaf in leaves}
    paths: dict[str, list[dict[str, Any]]] = {}
    for node, item in member_rows:
        if node not in items:
            return None  # a member of a node that is not a leaf: not a tree this build wrote
        items[node].append(item)
        paths[vectors.item_ids[item]] = chain[node]
    return Tree(leaves, tuple(tuple(items[leaf]) for leaf in leaves), matrix[list(leaves)], paths)


def summary_channel(tree: Tree, vectors: DenseVectors, query_vector: Matrix, depth: int, floor: float) -> list[str]:
    """The items under the SUMMARY_NODES level-1 summaries closest to the query (cosine at least `floor`),
    node by node, each node's items by their own cosine; at most depth."""
    if not tree.leaves or not query_vector.any():
        return []
    scores = cosines(tree.leaf_matrix, query_vector).astype(numpy.float64)
    best = top_rows(numpy.flatnonzero(scores >= floor), scores, SUMMARY_NODES).tolist()
    found: list[str] = []
    for leaf in best:
        rows = tree.leaf_rows[leaf]
        near = cosines(vectors.matrix[list(rows)], query_vector)
        found.extend(vectors.item_ids[row] for _, row in sorted(zip((-near).tolist(), rows, strict=True)))
    return found[:depth]
