"""Whether this process can rank with a published index's `dense` and `summary` channels, and if not, why: the one
owner of that fact for knowledge.search (`knowledge.hybrid`, its `retrieval.unavailableChannels`), `theurian index
status` and doctor's retrieval index row.

Both channels compare the query's vector with vectors the index build made, so they need the model the index
records (name, dimension and the sha256 of its weights): the installation's model must load
(`theurian.embedding.embedding_model_fault`, which doctor's `embedding model` row shows) and have that identity (a
model folder whose weights changed since the build has another). Otherwise the word channels still answer: the
index is degraded, not refused (docs/decisions.md, "fix-open (session 13)").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from knowledge.index_pointer import IndexPointer
from theurian.embedding import EmbeddingModel, ModelIdentity, embedding_model_fault, load_model, model_cure

SEMANTIC_CHANNELS: Final = ("dense", "summary")
MODEL_UNAVAILABLE: Final = "embedding-model-unavailable"  # the installation's model cannot be loaded
MODEL_MISMATCH: Final = "embedding-model-mismatch"  # it loads, but the index's vectors were made by another
REBUILD_CURE: Final = "`theurian index build`"


@dataclass(frozen=True)
class SemanticGap:
    """The channels an index offers that this process cannot rank with, and why."""

    code: str  # MODEL_UNAVAILABLE or MODEL_MISMATCH: knowledge.search's `unavailableChannels[].reason`
    channels: tuple[str, ...]  # in the index's order: dense, and summary over a --raptor index
    reason: str  # one line for an operator
    cure: str  # what makes the channels answer again

    def document(self) -> list[dict[str, str]]:
        """`retrieval.unavailableChannels` (and `index status --json`'s): one entry per channel."""
        return [{"channel": channel, "reason": self.code} for channel in self.channels]


def semantic_model(
    pointer: IndexPointer, model: EmbeddingModel | None = None
) -> tuple[EmbeddingModel | None, SemanticGap | None]:
    """The model to embed a query with for `pointer`'s semantic channels (`model`: the installation's when None),
    or None and the gap that keeps them from answering; (None, None) when the index offers neither channel."""
    offered = tuple(channel for channel in pointer.channels if channel in SEMANTIC_CHANNELS)
    if not offered or pointer.model is None:
        return None, None
    if model is None:
        fault = embedding_model_fault()
        if fault is not None:
            return None, SemanticGap(MODEL_UNAVAILABLE, offered,
                                     f"the embedding model cannot be loaded: {fault}", model_cure())
        model = load_model()
    if model.identity != pointer.model:
        return None, SemanticGap(MODEL_MISMATCH, offered,
                                 f"its vectors were made by {describe_model(pointer.model)}, and this "
                                 f"installation's embedding model is {describe_model(model.identity)}",
                                 REBUILD_CURE)
    return model, None


def describe_model(identity: ModelIdentity) -> str:
    """A model's identity in one phrase: two models of one name told apart by their weights."""
    return f"{identity.name} ({identity.dimension} dimensions, weights sha256 {identity.weights_sha256[:12]}…)"
