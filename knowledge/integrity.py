"""The two bounded damage checks behind the present-only `integrity` key.

Both compare a live count against a record of what it should be: migration rows against the active pointer's
`migrationCount`, and surfaceable items against `project_integrity.expected_surfaceable_count` (written by
`migrate apply` in the same transaction as the rows it counts). A built state is immutable, so any difference,
in either direction, is damage. The check is incomplete by design; its absence asserts nothing. A reader runs it
once per state file, with the stamp it backs up (`knowledge.state_stamp`).
"""

from __future__ import annotations

import sqlite3
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


def with_integrity(response: dict[str, Any], damaged: bool) -> dict[str, Any]:
    """Add the key only when damage was detected: there is no `damageDetected: false` form."""
    if damaged:
        response["integrity"] = dict(INTEGRITY_KEY)
    return response
