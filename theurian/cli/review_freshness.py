"""Whether the evidence lake changed after the review store was built from it: the test `theurian doctor` and
`theurian project status` make before calling the store "current with the lake".

Every lake write is a rename into its kind folder (`theurian.durable`), and adding, removing or renaming a file
moves its folder's mtime; so a record ingested, deleted (the documented cure for leaked content is to delete the
file and rebuild) or moved since the build shows as a folder — the lake itself, a repository folder or a kind
folder — whose mtime is not older than the store's. A file edited in place moves only its own mtime, so each
record file is `lstat`ed too: the lake listing a build makes (`evidence.lake_listing.scan_records(identities=True)`,
measured in docs/operating.md). Mtimes, not ctimes: a project copied or restored whole (`cp -a`, `rsync -a`, a
backup) keeps every mtime, the store's included, but has every ctime at the copy, so a ctime test would call every
such store stale. The price: a file edited in place whose mtime was then set back (`touch -d`) is not seen.

Times are compared in nanoseconds, and a time equal to the store's counts as a change: a store published in the
same clock tick as a lake write may not hold it. What this cannot see: a change made while a build ran, after its
scan and before it published the store (it is older than the store's own time); the next ingest's run manifest,
or a second build, settles it.
"""

from __future__ import annotations

import os
from pathlib import Path

from evidence.lake_listing import scan_records
from evidence.records import KINDS
from theurian.containment import resolve_inside
from theurian.project import REVIEW_DIR


def lake_change_since(root: Path, folders: list[str], built_ns: int) -> str | None:
    """The first change to the lake at or after `built_ns` (a time in ns, the store's mtime), named for an
    operator, or None when none. `folders`: the lake's repository folders (`Lake.repository_folders`).

    Raises:
        PathEscapeError: a folder of the lake resolves outside it (as a build would refuse it).
        OSError: the lake cannot be listed.
    """
    lake = resolve_inside(root, REVIEW_DIR)
    watched = [(REVIEW_DIR, lake)]
    for folder in folders:
        watched.append((f"{REVIEW_DIR}/{folder}", lake / folder))
        watched += [(f"{REVIEW_DIR}/{folder}/{kind}", lake / folder / kind) for kind in KINDS]
    for relative, path in watched:
        try:
            changed = os.stat(path).st_mtime_ns >= built_ns
        except FileNotFoundError:
            continue  # a kind folder never written; its repository folder's mtime says if one went away
        if changed:
            return f"a record was added, removed or renamed in {relative} since"
    entries, _ = scan_records(root, identities=True)
    for entry in entries:
        if entry.identity is not None and entry.identity[3] >= built_ns:
            return f"{REVIEW_DIR}/{entry.relative} was changed since"
    return None
