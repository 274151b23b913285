"""What a published index proposes for one query: every channel it offers, each a ranked list of item ids.

The index only proposes; knowledge/retrieval.py fuses the lists (knowledge/fusion.py) and re-reads every
candidate from the canonical state before serving it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from knowledge.channels import word_channels
from knowledge.index import IndexPointer


@dataclass(frozen=True)
class Proposal:
    offered: tuple[str, ...]  # the channels this index answers with (fusedScore's normaliser)
    channels: Mapping[str, Sequence[str]]
    raptor_paths: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)


def propose(index: sqlite3.Connection, pointer: IndexPointer, query: str, depth: int) -> Proposal:
    """Each offered channel's candidates for `query`, at most `depth` each.

    Raises:
        sqlite3.DatabaseError: the index is damaged past what `open_index` probed.
    """
    offered = pointer.channels
    channels = word_channels(index, query, depth, offered)
    return Proposal(offered, channels)
