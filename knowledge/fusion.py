"""Reciprocal-rank fusion of the ranked channels, weighted per channel.

A hit's fused score is the sum, over the channels that proposed it, of `weight / (RRF_K + rank)`; `fusedScore`
divides it by the best score possible over the channels the index offered (first in every one = 1.0). The weights
were tuned on the tuning half of the labelled set in `fixtures/knowledge-retrieval/` and are reported on the
held-out half (docs/decisions.md, "Knowledge retrieval: channels and fusion"): a channel weighs only as much as
it measurably helped. Ties fall back to the item id, so one index and one query give one order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

RRF_K: Final = 60  # reciprocal rank fusion's customary constant: rank 1 scores 1/61
# The order channels are named in `foundBy`, and every channel a hit can be found by.
CHANNEL_ORDER: Final = ("lexical", "title", "trigram", "dense", "summary")
CHANNEL_WEIGHTS: Final[Mapping[str, float]] = {
    "lexical": 1.0,
    "title": 1.0,
    "trigram": 1.0,
    "dense": 1.0,
    "summary": 1.0,
}


@dataclass(frozen=True)
class Fused:
    item_id: str
    score: float  # normalised: 1.0 is first in every offered channel
    found_by: tuple[str, ...]


def fuse(
    channels: Mapping[str, Sequence[str]],
    offered: Sequence[str],
    weights: Mapping[str, float] = CHANNEL_WEIGHTS,
) -> list[Fused]:
    """Every item any channel proposed, best first (ties by item id).

    `channels` maps a channel to its item ids, best first; `offered` names every channel the index could answer
    with (the normaliser), whether or not it proposed anything for this query.
    """
    best = sum(weights[name] for name in offered) / (RRF_K + 1)
    scores: dict[str, float] = {}
    found: dict[str, set[str]] = {}
    for name, ids in channels.items():
        weight = weights[name]
        for rank, item_id in enumerate(ids, start=1):
            scores[item_id] = scores.get(item_id, 0.0) + weight / (RRF_K + rank)
            found.setdefault(item_id, set()).add(name)
    ordered = sorted(scores, key=lambda item_id: (-scores[item_id], item_id))
    return [
        Fused(item_id, min(1.0, scores[item_id] / best), tuple(c for c in CHANNEL_ORDER if c in found[item_id]))
        for item_id in ordered
        if scores[item_id] > 0
    ]
