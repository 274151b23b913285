"""The two bounded damage checks behind the present-only `integrity` key.

Both compare a live count against a record of what it should be: migration rows against the active pointer's
`migrationCount`, and surfaceable items against `project_integrity.expected_surfaceable_count` (written by
`migrate apply` in the same transaction as the rows it counts). A built state is immutable, so any difference,
in either direction, is damage. The check is incomplete by design; its absence asserts nothing.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import OrderedDict
from typing import Any, Final

from knowledge.errors import INTEGRITY_REMEDY
from knowledge.vocabulary import SURFACEABLE_STATUSES

INTEGRITY_KEY: Final = {"damageDetected": True, "remedy": INTEGRITY_REMEDY}
SURFACEABLE_SQL: Final = ", ".join(f"'{status}'" for status in SURFACEABLE_STATUSES)


def surfaceable_count(connection: sqlite3.Connection, key: str) -> int:
    row = connection.execute(
        f"SELECT count(*) FROM knowledge_items WHERE project_id = ? AND status IN ({SURFACEABLE_SQL})",  # noqa: S608
        (key,),
    ).fetchone()
    return int(row[0])


def damage_detected(connection: sqlite3.Connection, key: str, migration_count: int) -> bool:
    """True when either count disagrees with its record (a missing record is damage too)."""
    migrations = connection.execute(
        "SELECT count(*) FROM migration_history WHERE project_id = ?", (key,)
    ).fetchone()[0]
    expected = connection.execute(
        "SELECT expected_surfaceable_count FROM project_integrity WHERE project_id = ?", (key,)
    ).fetchone()
    if migrations != migration_count or expected is None:
        return True
    return bool(expected[0] != surfaceable_count(connection, key))


# A built state is immutable, so the two counts are computed once per state file and remembered for as long as the
# file is the same one: the key holds its inode, size and modification and change times, so a file written in
# place (damage, or a hand edit) is counted again. A file changed within the last SETTLED_NS is not remembered:
# file times tick coarsely (a few ms), so two writes that close together can leave the same times behind. The
# counts cost ~17 ms a call at 10,000 items.
REMEMBERED_STATES: Final = 64
SETTLED_NS: Final = 2_000_000_000
_remembered: OrderedDict[tuple[object, ...], bool] = OrderedDict()
_remembered_lock = threading.Lock()


def damage_detected_once(
    connection: sqlite3.Connection, key: str, migration_count: int, opened: os.stat_result
) -> bool:
    """`damage_detected`, remembered per state file; `opened` is the file's stat taken before it was opened, so a
    change after that moment is seen by the next call."""
    identity = (opened.st_dev, opened.st_ino, opened.st_size, opened.st_mtime_ns, opened.st_ctime_ns, key,
                migration_count)
    with _remembered_lock:
        if identity in _remembered:
            _remembered.move_to_end(identity)
            return _remembered[identity]
    damaged = damage_detected(connection, key, migration_count)
    if time.time_ns() - max(opened.st_mtime_ns, opened.st_ctime_ns) < SETTLED_NS:
        return damaged
    with _remembered_lock:
        _remembered[identity] = damaged
        while len(_remembered) > REMEMBERED_STATES:
            _remembered.popitem(last=False)
    return damaged


def with_integrity(response: dict[str, Any], damaged: bool) -> dict[str, Any]:
    """Add the key only when damage was detected: there is no `damageDetected: false` form."""
    if damaged:
        response["integrity"] = dict(INTEGRITY_KEY)
    return response
