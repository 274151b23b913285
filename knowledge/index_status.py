"""Whether a project's retrieval index is the one `knowledge.search` will rank with: built over the active state,
under this installation's disclosure ceiling, and readable (the same tests `knowledge.retrieval` makes before
ranking: `open_index`'s probe, then the word postings checked against their digest, the first read a ranking
makes), with SQLite's quick_check over every page first, so damage in pages neither reads (the FTS tables a query
then reads) is found here too rather than only when a search falls back. Damage inside a row's value that leaves
every page well formed is found by neither, here or by a search."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from knowledge.index import IndexPointer, open_index, read_index_pointer
from knowledge.state import Pointer, read_pointer

CURRENT: Final = "current"
STALE: Final = "stale"  # built over another state than the active one
CEILING_MISMATCH: Final = "ceiling-mismatch"
NOT_BUILT: Final = "not-built"
NO_STATE: Final = "no-state"  # nothing applied yet: nothing to index
UNREADABLE: Final = "unreadable"  # knowledge.search's `index-unreadable`: damaged, or not the build named
HEALTHY: Final = (CURRENT, NO_STATE)  # the states `index status` exits 0 with


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
        if self.state == UNREADABLE:
            return (f"{built}: unreadable (damaged, or not the build its pointer names); knowledge.search falls "
                    "back to substring search (`theurian index build`)")
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
    return IndexStatus(CURRENT if _readable(root, index) else UNREADABLE, index, active)


def _readable(root: Path, index: IndexPointer) -> bool:
    from knowledge.postings import load_postings  # numpy: only when there is an index to read

    connection = open_index(root, index)
    if connection is None:
        return False
    with closing(connection):
        try:
            # Every page's structure, then the postings against their digest: damage in pages neither the probe
            # nor the postings read (the FTS tables a query reads) would otherwise show only when a search falls
            # back. SQLite's quick_check reads the whole file (a few MB at 30,000 items).
            if connection.execute("PRAGMA quick_check").fetchall() != [("ok",)]:
                return False
            return load_postings(connection, index.build_id, index.postings_sha256) is not None
        except sqlite3.DatabaseError:
            return False
