"""`index build --raptor`: an extractive summary tree over the indexed items, and the `summary` channel.

No language model writes anything. The items' dense vectors are clustered top-down into three levels (level 3
under the catalog root, then 2, then 1, whose members are items) by spherical k-means with a deterministic
farthest-first start, so one index and one model always give one tree. A node's summary is the SUMMARY_SENTENCES
sentences closest to its centroid — of its items' sentences at level 1, of its children's summaries above — and
its title is the title of its most central item. Only the rows the index holds (what the disclosure ceiling lets
a caller see) ever reach a cluster, a sentence or a title.

A query is matched against the level-1 summaries; the items under the best ones (cosine at least SUMMARY_FLOOR)
are the channel's candidates, and every hit of a `--raptor` index carries its ancestry as `raptorPath`.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy

from knowledge.dense import DenseVectors, Matrix
from theurian.embedding import EmbeddingModel, normalise_rows

LEVELS: Final = (3, 2, 1)
LEAF_SIZE: Final = 8  # about this many items under one level-1 node
SUMMARY_SENTENCES: Final = 3
SENTENCES_PER_ITEM: Final = 12  # an item's first sentences are the candidates for its node's summary
KMEANS_ROUNDS: Final = 8
_SENTENCE: Final = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_HEADING: Final = re.compile(r"^\s*#+\s*")


@dataclass
class Node:
    level: int
    members: list[int]  # rows of the dense matrix (items) under this node
    parent: int | None  # the parent's position in the node list
    node_id: str = ""
    title: str = ""
    sentences: tuple[str, ...] = ()
    sentence_vectors: Matrix | None = None


def sentences_of(body: str) -> list[str]:
    """The body's sentences, headings unmarked, blanks dropped, at most SENTENCES_PER_ITEM."""
    parts = (_HEADING.sub("", part).strip() for part in _SENTENCE.split(body))
    return [part for part in parts if part][:SENTENCES_PER_ITEM]


def _centroid(matrix: Matrix, rows: Sequence[int]) -> Matrix:
    centre = matrix[list(rows)].mean(axis=0, keepdims=True)
    result: Matrix = normalise_rows(centre.astype(numpy.float32))[0]
    return result


def kmeans(matrix: Matrix, rows: list[int], k: int) -> list[list[int]]:
    """`rows` split into at most k non-empty clusters (each in row order), deterministically."""
    if k <= 1 or len(rows) <= 1:
        return [rows]
    points = matrix[rows]
    first = int(numpy.argmax(points @ _centroid(matrix, rows)))
    centres = [first]
    nearest = points @ points[first]
    while len(centres) < min(k, len(rows)):
        candidate = int(numpy.argmin(nearest))
        if candidate in centres:
            break
        centres.append(candidate)
        nearest = numpy.maximum(nearest, points @ points[candidate])
    means = points[centres].copy()
    assignment = numpy.zeros(len(rows), dtype=numpy.int64)
    for _ in range(KMEANS_ROUNDS):
        assignment = numpy.argmax(points @ means.T, axis=1)
        for cluster in range(len(means)):
            chosen = points[assignment == cluster]
            if len(chosen):
                means[cluster] = normalise_rows(chosen.mean(axis=0, keepdims=True).astype(numpy.float32))[0]
    clusters = [[rows[i] for i in numpy.flatnonzero(assignment == c)] for c in range(len(means))]
    return [cluster for cluster in clusters if cluster]


def build_tree(model: EmbeddingModel, vectors: DenseVectors, texts: Sequence[tuple[str, str, str]]) -> list[Node]:
    """The tree's nodes, parents before children, level 3 first; empty when nothing is indexed."""
    count = len(vectors.item_ids)
    if count == 0:
        return []
    branching = max(2, math.ceil((count / LEAF_SIZE) ** (1 / 3)))
    nodes: list[Node] = []
    frontier: list[tuple[list[int], int | None]] = [(list(range(count)), None)]
    for level in LEVELS:
        next_frontier: list[tuple[list[int], int | None]] = []
        for rows, parent in frontier:
            for cluster in kmeans(vectors.matrix, rows, branching):
                nodes.append(Node(level, cluster, parent))
                next_frontier.append((cluster, len(nodes) - 1))
        frontier = next_frontier
    children: dict[int, list[Node]] = {}
    for node in nodes:
        if node.parent is not None:
            children.setdefault(node.parent, []).append(node)
    for position in range(len(nodes) - 1, -1, -1):  # children first: a parent summarises their summaries
        _summarise(model, vectors, texts, nodes[position], children.get(position, []))
    return nodes


def _summarise(
    model: EmbeddingModel,
    vectors: DenseVectors,
    texts: Sequence[tuple[str, str, str]],
    node: Node,
    children: list[Node],
) -> None:
    centre = _centroid(vectors.matrix, node.members)
    central = node.members[int(numpy.argmax(vectors.matrix[node.members] @ centre))]
    node.title = texts[central][1]
    node.node_id = hashlib.sha256(
        f"{node.level}:{','.join(vectors.item_ids[row] for row in node.members)}".encode()
    ).hexdigest()[:16]
    if node.level == 1:
        candidates = list(dict.fromkeys(s for row in node.members for s in sentences_of(texts[row][2])))
        matrix = model.embed(candidates) if candidates else numpy.zeros((0, vectors.matrix.shape[1]), "float32")
    else:
        seen: dict[str, Matrix] = {}
        for child in children:
            assert child.sentence_vectors is not None  # children are summarised first
            for sentence, vector in zip(child.sentences, child.sentence_vectors, strict=True):
                seen.setdefault(sentence, vector)
        candidates = list(seen)
        matrix = numpy.array(list(seen.values()), dtype=numpy.float32).reshape(len(candidates), -1)
    if not candidates:
        node.sentences, node.sentence_vectors = (node.title,), model.embed([node.title])
        return
    scores = matrix @ centre
    picked = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), i))[:SUMMARY_SENTENCES]
    node.sentences = tuple(candidates[i] for i in picked)
    node.sentence_vectors = matrix[picked]


def summary_of(node: Node) -> str:
    return " ".join(node.sentences)
