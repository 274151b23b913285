"""Whether a project's retrieval index is the one `knowledge.search` will rank with: built over the active state,
under this installation's disclosure ceiling (the same tests `knowledge.retrieval` makes before using it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from knowledge.index import IndexPointer, read_index_pointer
from knowledge.state import Pointer, read_pointer

CURRENT: Final = "current"
STALE: Final = "stale"  # built over another state than the active one
CEILING_MISMATCH: Final = "ceiling-mismatch"
NOT_BUILT: Final = "not-built"
NO_STATE: Final = "no-state"  # nothing applied yet: nothing to index


@dataclass(frozen=True)
class IndexStatus:
    state: str
    index: IndexPointer | None
    active: Pointer | None

    def describe(self) -> str:
        if self.state == NO_STATE:
            return "no knowledge state yet (`theurian migrate apply` first)"
        if self.index is None or self.active is None:
            return "not built (`theurian index build`)"
        built = f"index {self.index.build_id} over state {self.index.state_hash}"
        if self.state == STALE:
            return f"{built}: stale, the active state is {self.active.state_hash} (`theurian index build`)"
        if self.state == CEILING_MISMATCH:
            return (f"{built}: built under the ceiling {self.index.disclosure_ceiling}, not this installation's "
                    "(`theurian index build`)")
        return f"{built}: current"


def index_status(root: Path, ceiling: str) -> IndexStatus:
    """Raises StateUnreadableError when the active state's pointer is damaged."""
    active = read_pointer(root)
    index = read_index_pointer(root)
    if active is None:
        return IndexStatus(NO_STATE, index, None)
    if index is None:
        return IndexStatus(NOT_BUILT, None, active)
    if index.state_hash != active.state_hash:
        return IndexStatus(STALE, index, active)
    if index.disclosure_ceiling != ceiling:
        return IndexStatus(CEILING_MISMATCH, index, active)
    return IndexStatus(CURRENT, index, active)
