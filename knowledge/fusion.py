"""Reciprocal-rank fusion of the ranked channels, weighted per channel, and the tuned constants it uses.

A hit's fused score is the sum, over the channels that proposed it, of `weight / (k + rank)`; `fusedScore`
divides it by the best score possible over the channels the index offered (first in every one = 1.0). The
weights, k and the two cosine floors were chosen on the tuning half of the labelled set in
`fixtures/knowledge-retrieval/` (tests/benchmarks/test_knowledge_retrieval_benchmark.py, which also prints the
held-out half): a channel weighs only as much as it measurably helped there. Ties fall back to the item id, so
one index and one query give one order.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

# The order channels are named in `foundBy`, and every channel a hit can be found by.
CHANNEL_ORDER: Final = ("lexical", "title", "trigram", "dense", "summary")
WORD_CHANNELS: Final = CHANNEL_ORDER[:3]  # every index offers these; dense and summary need the embedding model


@dataclass(frozen=True)
class Tuning:
    """Everything the ranking was tuned by. `weights` must name every channel in CHANNEL_ORDER."""

    weights: Mapping[str, float] = field(
        default_factory=lambda: {"lexical": 0.5, "title": 0.5, "trigram": 1.0, "dense": 1.0, "summary": 0.5}
    )
    rrf_k: int = 5  # a small k lets a channel's first few ranks count for more than its long tail
    dense_floor: float = 0.15  # a cosine below this proposes nothing in the dense channel
    summary_floor: float = 0.15  # nor, against a level-1 summary, in the summary channel


TUNED: Final = Tuning()


@dataclass(frozen=True)
class Fused:
    item_id: str
    score: float  # normalised: 1.0 is first in every offered channel
    found_by: tuple[str, ...]


def fuse(channels: Mapping[str, Sequence[str]], offered: Sequence[str], tuning: Tuning = TUNED) -> Iterator[Fused]:
    """Every item a channel of positive weight proposed, best first (ties by item id), made as it is asked for (a
    search reads only as far as its limit).

    `channels` maps a channel to its item ids, best first; `offered` names every channel the index could answer
    with (the normaliser), whether or not it proposed anything for this query. `found_by` names every channel
    that proposed the item, a channel of weight 0 included.
    """
    weights, k = tuning.weights, tuning.rrf_k
    best = sum(weights[name] for name in offered) / (k + 1)
    scores: dict[str, float] = {}
    found: dict[str, set[str]] = {}
    for name, ids in channels.items():
        for rank, item_id in enumerate(ids, start=1):
            scores[item_id] = scores.get(item_id, 0.0) + weights[name] / (k + rank)
            found.setdefault(item_id, set()).add(name)
    ordered = sorted((i for i in scores if scores[i] > 0), key=lambda item_id: (-scores[item_id], item_id))
    for item_id in ordered:
        names = found[item_id]
        yield Fused(item_id, min(1.0, scores[item_id] / best), tuple(c for c in CHANNEL_ORDER if c in names))
