"""Which items of a knowledge state hold text the secret scan hits: what `knowledge.status` re-checks against the
project's policy on every call instead of scanning every item each time.

The state is immutable once built (ARCHITECTURE: derived stores are swapped in whole), so the ids whose current
title or body the scan hits at all — acknowledged or not: the acknowledgements are the project's config, read per
call — are a fact of the state file. They are remembered per file identity in the daemon's verify-once cache, on
a shelf of their own, once the file's times have settled (`theurian.stamped_store.settled`), as every verdict
about a store is.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from theurian.secret_scan import scan_text
from theurian.stamped_store import Identity, VerifiedStores, settled

SHELF_KIND: Final = "knowledge-scan-hits"
_NO_SECRET: Final = b""  # the ids depend on the state's bytes alone, not on the installation's secret


def items_with_scan_hits(db: sqlite3.Connection, key: str, join: str, state_file: str, identity: Identity | None,
                         stores: VerifiedStores | None) -> tuple[str, ...]:
    """The ids of the project's items (`key`) whose current title or body the secret scan hits; `join` is the
    item → current revision join (`knowledge.reading.ITEM_JOIN`). Remembered in `stores` under `state_file` and
    its `identity`; scanned on every call without either."""
    shelf = None if stores is None or identity is None else stores.shelf(SHELF_KIND)
    if shelf is not None and identity is not None:
        remembered = shelf.get(state_file, identity, _NO_SECRET)
        if remembered is not None:
            return tuple(remembered)
    hits = tuple(
        item_id for item_id, title, body in db.execute(f"SELECT i.item_id, r.title, r.body {join} "
                                                       "WHERE i.project_id = ?", (key,))
        if any(scan_text(text) for text in (title, body) if text is not None)
    )
    if shelf is not None and identity is not None and settled(identity):
        shelf.put(state_file, identity, _NO_SECRET, hits)
    return hits
