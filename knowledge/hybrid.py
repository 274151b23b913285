"""What a published index proposes for one query: every channel it offers, each a ranked list of item ids.

The word channels always answer. `dense` (and `summary` over a `--raptor` index) answer only when this process's
embedding model has the identity the index was built with and the stored vectors (and tree) match the digests
the pointer recorded (`knowledge.index_semantic`); otherwise the index offers its word channels alone,
`retrieval.channels` says so and `retrieval.unavailableChannels` says why.
The index only proposes; knowledge/retrieval.py fuses the lists (knowledge/fusion.py) and re-reads every
candidate from the canonical state before serving it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy

from knowledge.channels import match_expression, word_channels
from knowledge.dense import DenseVectors, dense_channel, load_dense
from knowledge.errors import IndexDamagedError
from knowledge.fusion import TUNED, WORD_CHANNELS, Tuning
from knowledge.index_pointer import IndexPointer
from knowledge.index_semantic import SemanticGap, semantic_model
from knowledge.postings import load_postings
from knowledge.raptor_store import Tree, load_tree, summary_channel
from theurian.embedding import EmbeddingModel


@dataclass(frozen=True)
class Proposal:
    offered: tuple[str, ...]  # the channels this index answers with (fusedScore's normaliser)
    channels: Mapping[str, Sequence[str]]
    raptor_paths: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)
    unavailable: SemanticGap | None = None  # the channels the index has that this process cannot rank with


def propose(
    index: sqlite3.Connection,
    pointer: IndexPointer,
    query: str,
    depth: int,
    tuning: Tuning = TUNED,
    model: EmbeddingModel | None = None,
) -> Proposal:
    """Each offered channel's candidates for `query`, at most `depth` each (`model`: the installation's when None).

    Raises:
        sqlite3.DatabaseError: the index is damaged past what `open_index` probed.
        IndexDamagedError: its postings do not match the digest the pointer recorded.
    """
    postings = load_postings(index, pointer.build_id, pointer.postings_sha256)
    if postings is None:
        raise IndexDamagedError("the index's word postings do not match their digest")
    words = tuple(c for c in pointer.channels if c in WORD_CHANNELS)
    channels: dict[str, Sequence[str]] = dict(word_channels(index, postings, query, depth, words))
    gap, serving, vectors, tree = _semantic(index, pointer, model)
    if serving is None or vectors is None:
        return Proposal(words, channels, unavailable=gap)
    # A query with no word in it (punctuation, FTS syntax alone) asks nothing of any channel.
    query_vector = serving.embed([query])[0] if match_expression(query) else numpy.zeros(1, numpy.float32)
    channels["dense"] = dense_channel(vectors, query_vector, depth, tuning.dense_floor)
    if tree is None:
        return Proposal((*words, "dense"), channels)
    channels["summary"] = summary_channel(tree, vectors, query_vector, depth, tuning.summary_floor)
    return Proposal((*words, "dense", "summary"), channels, tree.paths)


def _semantic(
    index: sqlite3.Connection, pointer: IndexPointer, model: EmbeddingModel | None
) -> tuple[SemanticGap | None, EmbeddingModel | None, DenseVectors | None, Tree | None]:
    if pointer.dense_sha256 is None:
        return None, None, None, None
    # A model that cannot be loaded, or another model than the one that made the vectors (theirs are not
    # comparable with its query vectors): the word channels still answer, and the gap says why.
    serving, gap = semantic_model(pointer, model)
    if serving is None or pointer.model is None:
        return gap, None, None, None
    vectors = load_dense(index, pointer.build_id, pointer.dense_sha256)
    if vectors is None or vectors.identity != pointer.model:
        return None, None, None, None
    if "summary" not in pointer.channels or pointer.raptor_sha256 is None:
        return None, serving, vectors, None
    return None, serving, vectors, load_tree(index, pointer.build_id, pointer.raptor_sha256, vectors)
