"""Whether a project's retrieval index is the one `knowledge.search` will rank with: built over the active state,
under this installation's disclosure ceiling, stamped by this installation in the current index format with the
rows it stamped (the checks `knowledge.retrieval` makes before ranking: `open_verified_index`, then the word
postings, the first read a ranking makes), with SQLite's quick_check over every page, so damage in pages no row
read reaches is found here too rather than only when a search falls back. A refused index is told apart: built by
another installation (`foreign`), in an earlier index format (`superseded`), or damaged (`unreadable`, as
before); each exits 1 with the cure of rebuilding it. An index a search would rank with, but without its `dense`
(and `summary`) channel because the installation's embedding model cannot be loaded or is not the model that made
its vectors, is `degraded` (`knowledge.index_semantic` says which and why, as the search's
`retrieval.unavailableChannels` does); it exits 1 too, with that gap's cure."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from knowledge.errors import IndexDamagedError
from knowledge.index import open_verified_index
from knowledge.index_pointer import IndexPointer, load_index_pointer
from knowledge.index_semantic import REBUILD_CURE, SemanticGap, semantic_model
from knowledge.state import Pointer, read_pointer
from theurian.stamp import NOT_BUILT_HERE, STALE_PREFIX

CURRENT: Final = "current"
STALE: Final = "stale"  # built over another state than the active one
CEILING_MISMATCH: Final = "ceiling-mismatch"
NOT_BUILT: Final = "not-built"
NO_STATE: Final = "no-state"  # nothing applied yet: nothing to index
UNREADABLE: Final = "unreadable"  # knowledge.search's `index-unreadable`: damaged, or not the build named
FOREIGN: Final = "foreign"  # `index-unreadable` too: its stamp is not this installation's (copied, planted)
SUPERSEDED: Final = "superseded"  # `index-unreadable` too: built in an earlier index format, before the stamp
DEGRADED: Final = "degraded"  # ranked with, but by its word channels alone: `retrieval.unavailableChannels`
HEALTHY: Final = (CURRENT, NO_STATE)  # the states `index status` exits 0 with
_FALLS_BACK: Final = "knowledge.search falls back to substring search"


@dataclass(frozen=True)
class IndexStatus:
    state: str
    index: IndexPointer | None
    active: Pointer | None
    reason: str | None = None  # why a foreign, superseded or unreadable index is refused
    gap: SemanticGap | None = None  # a degraded index's missing channels

    @property
    def channels(self) -> list[str]:
        """The channels knowledge.search ranks with now: none unless current or degraded."""
        if self.state not in (CURRENT, DEGRADED) or self.index is None:
            return []
        missing = self.gap.channels if self.gap else ()
        return [channel for channel in self.index.channels if channel not in missing]

    @property
    def cure(self) -> str | None:
        """What makes the index current: the model's cure when the model is the fault, else a rebuild."""
        if self.state in HEALTHY:
            return None
        if self.state == NOT_BUILT or self.index is None:
            return REBUILD_CURE
        return self.gap.cure if self.gap else REBUILD_CURE

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
        if self.state == FOREIGN:
            return (f"{built}: refused, not built by this installation ({self.reason}); {_FALLS_BACK} "
                    "(`theurian index build`)")
        if self.state == SUPERSEDED:
            return (f"{built}: superseded, built in an earlier index format; {_FALLS_BACK} until it is rebuilt "
                    "(`theurian index build`)")
        if self.state == UNREADABLE:
            return (f"{built}: unreadable (damaged, or not the build its pointer names: {self.reason}); "
                    f"{_FALLS_BACK} (`theurian index build`)")
        if self.state == DEGRADED and self.gap is not None:
            return (f"{built}: degraded, knowledge.search ranks with {', '.join(self.channels)} only: "
                    f"{'/'.join(self.gap.channels)} unavailable, {self.gap.reason} ({self.gap.cure})")
        return f"{built}: current"


def index_status(root: Path, ceiling: str) -> IndexStatus:
    """Raises StateUnreadableError when the active state's pointer is damaged."""
    active = read_pointer(root)
    index = load_index_pointer(root)
    if active is None:
        return IndexStatus(NO_STATE, index, None)
    if index is None:
        return IndexStatus(NOT_BUILT, None, active)
    if index.state_hash != active.state_hash:
        return IndexStatus(STALE, index, active)
    if index.disclosure_ceiling != ceiling:
        return IndexStatus(CEILING_MISMATCH, index, active)
    reason = _refusal(root, index)
    if reason is not None:
        return IndexStatus(refused_state(reason), index, active, reason)
    _, gap = semantic_model(index)
    return IndexStatus(CURRENT if gap is None else DEGRADED, index, active, None, gap)


def refused_state(reason: str) -> str:
    """The state an index refused for `reason` is in."""
    if reason.startswith(STALE_PREFIX):
        return SUPERSEDED
    return FOREIGN if reason in NOT_BUILT_HERE else UNREADABLE


def _refusal(root: Path, index: IndexPointer) -> str | None:
    """Why knowledge.search would not rank with the index, or None when it would."""
    from knowledge.postings import load_postings  # numpy: only when there is an index to read

    try:
        connection = open_verified_index(root, index)
    except IndexDamagedError as exc:
        return exc.message
    with closing(connection):
        try:
            # Every page's structure too: a page no row read reaches (a freed one, an index's) would otherwise
            # show only when a search falls back. quick_check reads the whole file (a few MB at 30,000 items).
            if connection.execute("PRAGMA quick_check").fetchall() != [("ok",)]:
                return "damaged: SQLite's quick_check fails"
            if load_postings(connection, index.build_id, index.postings_sha256) is None:
                return "damaged: its word postings do not match their digest"
        except sqlite3.DatabaseError as exc:
            return f"unreadable: {type(exc).__name__}"
    return None
