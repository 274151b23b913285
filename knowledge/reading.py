"""Reading the active state for the tools: opening it read-only, shaping an item, knowledge.get and .status.

Every read goes through the disclosure ceiling: an item above it is treated exactly like an item that does not
exist (never returned, never counted). A row the state cannot explain — a status or sensitivity outside the
vocabulary, an item whose current revision belongs to another item — refuses the read instead of being served.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import orjson

from knowledge import CANONICAL_SCHEMA_VERSION
from knowledge.errors import (
    STATE_REBUILD_CURE,
    ItemNotAvailableError,
    StateDamagedError,
    StateNotAsBuiltError,
    StateUnreadableError,
)
from knowledge.integrity import SURFACEABLE_SQL, with_integrity
from knowledge.secret_gate import holds_refused_secret
from knowledge.secret_hits import items_with_scan_hits
from knowledge.state import (
    Pointer,
    open_read_only,
    project_key,
    require_pointer,
    rows_as_dicts,
    state_file_identity,
    state_read_failure,
)
from knowledge.state_stamp import verified_damage
from knowledge.vocabulary import (
    SENSITIVITIES,
    STATUSES,
    SURFACEABLE_STATUSES,
    disclosable,
    parse_rfc3339,
)
from theurian.hidden_characters import labelled
from theurian.project import Project
from theurian.safety import SAFETY_TRIPLE
from theurian.stamped_store import Identity, VerifiedStores

ITEM_COLUMNS: Final = (
    "i.item_id, i.kind, i.namespace, i.owner, i.status, i.trust_level, i.sensitivity, i.valid_from, "
    "i.valid_to, i.labels, i.scope_paths, i.current_revision_id, r.revision_id, "
    "r.item_id AS revision_item_id, r.title, r.body, r.content_type, r.created_at, r.content_file, "
    "r.content_sha256, r.source_anchors, r.migration_id"
)
ITEM_JOIN: Final = (
    "FROM knowledge_items i LEFT JOIN revisions r ON r.project_id = i.project_id "
    "AND r.revision_id = i.current_revision_id"
)


@dataclass(frozen=True)
class Reading:
    """One open, read-only view of a project's active state and what the serving installation may disclose."""

    project: Project
    pointer: Pointer
    db: sqlite3.Connection
    key: str
    damaged: bool
    allowed: tuple[str, ...]
    identity: Identity | None = None  # the state file's, as opened (`theurian.stamped_store.file_identity`)
    stores: VerifiedStores | None = None

    @property
    def allowed_sql(self) -> str:
        return ", ".join(f"'{level}'" for level in self.allowed)


@contextmanager
def open_state(project: Project, ceiling: str, stores: VerifiedStores | None = None) -> Iterator[Reading]:
    """The active state, read-only, with its stamp, rows and integrity counts checked once per state file in
    `stores` (`knowledge.state_stamp`; with no `stores`, on this call).

    Raises:
        StateMissingError, StateUnreadableError: there is no state this build can read.
        StateDamagedError: the state is not the one `migrate apply` built here (the one refusal for every reason).
    """
    pointer = require_pointer(project.root, project.project_id)
    path, identity = state_file_identity(project.root, pointer)
    with closing(open_read_only(project.root, pointer)) as connection:
        connection.row_factory = sqlite3.Row
        try:
            key = project_key(connection)
            recorded = connection.execute("SELECT value FROM meta WHERE key = 'state_hash'").fetchone()
            if recorded is None or recorded[0] != pointer.state_hash:
                raise StateUnreadableError(
                    f"the knowledge state pointer and its database disagree; {STATE_REBUILD_CURE}"
                )
            try:
                damaged = verified_damage(stores, path, identity, connection, key, pointer.migration_count)
            except StateNotAsBuiltError as exc:
                raise StateDamagedError(project.project_id) from exc
            yield Reading(project, pointer, connection, key, damaged, disclosable(ceiling), identity, stores)
        except sqlite3.DatabaseError as exc:
            raise state_read_failure(exc) from exc


def servable(row: sqlite3.Row, reading: Reading) -> bool:
    """Whether a caller under this ceiling may see the row; refuses a row the state cannot explain. A revision
    whose title or body holds a secret the knowledge gate refuses is withheld like an absent item: `migrate apply`
    never admits one, but a state built before the gate (or under an acknowledgement since withdrawn) may hold it,
    and no path (ranked, substring, get) serves it.

    Raises:
        StateUnreadableError: a status or sensitivity outside the vocabulary, or a revision of another item.
    """
    if row["status"] not in STATUSES or row["sensitivity"] not in SENSITIVITIES:
        raise StateUnreadableError(
            f"the knowledge state holds a value this build cannot interpret; {STATE_REBUILD_CURE}"
        )
    if row["revision_id"] is not None and row["revision_item_id"] != row["item_id"]:
        raise StateUnreadableError(
            f"the knowledge state names a revision of another item; {STATE_REBUILD_CURE}"
        )
    return bool(
        row["status"] in SURFACEABLE_STATUSES
        and row["sensitivity"] in reading.allowed
        and row["revision_id"] is not None
        and not holds_refused_secret(reading.project.root, (row["title"], row["body"]))
    )


def within_validity(row: sqlite3.Row, moment: datetime) -> bool:
    starts, ends = row["valid_from"], row["valid_to"]
    return (starts is None or parse_rfc3339(starts) <= moment) and (
        ends is None or moment < parse_rfc3339(ends)
    )


def result_of(row: sqlite3.Row, moment: datetime, excerpt: str) -> dict[str, Any]:
    """The contract's Result shape (without fusedScore/foundBy, which only the ranked path adds)."""
    created = parse_rfc3339(row["created_at"])
    return labelled({
        "itemId": row["item_id"],
        "revisionId": row["revision_id"],
        "title": row["title"],
        "excerpt": excerpt,
        "contentType": row["content_type"],
        "status": row["status"],
        "trustLevel": row["trust_level"],
        "sensitivity": row["sensitivity"],
        "freshness": {
            "revisionCreatedAt": row["created_at"],
            "isWithinValidity": within_validity(row, moment),
            "ageDays": max(0, (moment - created).days),
        },
        "sourceAnchors": orjson.loads(row["source_anchors"]),
        **SAFETY_TRIPLE,
    })


def get_item(project: Project, ceiling: str, item_id: str, shown_id: str,
             stores: VerifiedStores | None = None) -> dict[str, Any]:
    """knowledge.get: the current revision with provenance.

    Raises:
        ItemNotAvailableError: absent, retired or withheld (one message for all three).
        StateDamagedError: the item is not there and the state disagrees with its own records.
    """
    with open_state(project, ceiling, stores) as reading:
        row = reading.db.execute(
            f"SELECT {ITEM_COLUMNS} {ITEM_JOIN} WHERE i.project_id = ? AND i.item_id = ?",
            (reading.key, item_id),
        ).fetchone()
        if row is None or not servable(row, reading):
            if reading.damaged:
                raise StateDamagedError(project.project_id)
            raise ItemNotAvailableError(project.project_id, shown_id)
        result = result_of(row, datetime.now(UTC), row["body"])
        del result["excerpt"]
        result |= {
            "body": row["body"],
            "kind": row["kind"],
            "namespace": row["namespace"],
            "owner": row["owner"],
            "validFrom": row["valid_from"],
            "validTo": row["valid_to"],
            "labels": orjson.loads(row["labels"]),
            "scopePaths": orjson.loads(row["scope_paths"]),
            "aliases": _aliases(reading, item_id),
            "relations": _relations(reading, item_id),
            "evidence": _evidence(reading, item_id),
            "provenance": {
                "migrationId": row["migration_id"],
                "contentFile": row["content_file"],
                "contentSha256": row["content_sha256"],
                "stateHash": reading.pointer.state_hash,
            },
        }
        return with_integrity(labelled(result), reading.damaged)


def status_of(project: Project, ceiling: str, stores: VerifiedStores | None = None) -> dict[str, Any]:
    """knowledge.status: the six keys, counts of what this ceiling may see, the present-only integrity.

    An item counts exactly when get and search could serve it: a surfaceable status, a sensitivity under the
    ceiling, a current revision, and no secret the knowledge gate refuses in its current title or body (`servable`'s
    test, so a count never tells a caller of an item every read path withholds). Only the items the scan hits at
    all (`knowledge.secret_hits`, remembered per state file) are checked against the policy on each call.
    """
    with open_state(project, ceiling, stores) as reading:
        rows = reading.db.execute(
            "SELECT status, count(*) FROM knowledge_items WHERE project_id = ? "  # noqa: S608
            f"AND current_revision_id IS NOT NULL AND sensitivity IN ({reading.allowed_sql}) "
            f"AND status IN ({SURFACEABLE_SQL}) GROUP BY status ORDER BY status",
            (reading.key,),
        ).fetchall()
        withheld = _withheld_for_secrets(reading)
        by_status = {status: count - withheld[status] for status, count in rows if count - withheld[status]}
        return with_integrity(
            {
                "projectId": project.project_id,
                "stateHash": reading.pointer.state_hash,
                "itemCount": sum(by_status.values()),
                "itemsByStatus": by_status,
                "appliedMigrations": reading.pointer.migration_count,
                "schemaVersion": CANONICAL_SCHEMA_VERSION,
            },
            reading.damaged,
        )


def _withheld_for_secrets(reading: Reading) -> Counter[str]:
    """By status, the items knowledge.status's query counts that `servable` withholds for a secret in their current
    text: of the items the scan hits at all, those the project's policy refuses now."""
    withheld: Counter[str] = Counter()
    for item_id in items_with_scan_hits(reading.db, reading.key, ITEM_JOIN, reading.pointer.state_file,
                                        reading.identity, reading.stores):
        row = reading.db.execute(f"SELECT {ITEM_COLUMNS} {ITEM_JOIN} WHERE i.project_id = ? AND i.item_id = ?",
                                 (reading.key, item_id)).fetchone()
        if (row is not None and row["current_revision_id"] is not None and row["status"] in SURFACEABLE_STATUSES
                and row["sensitivity"] in reading.allowed
                and holds_refused_secret(reading.project.root, [t for t in (row["title"], row["body"]) if t])):
            withheld[row["status"]] += 1
    return withheld


def _aliases(reading: Reading, item_id: str) -> list[str]:
    return [
        r[0]
        for r in reading.db.execute(
            "SELECT alias FROM aliases WHERE project_id = ? AND item_id = ? ORDER BY alias",
            (reading.key, item_id),
        )
    ]


def _relations(reading: Reading, item_id: str) -> list[dict[str, Any]]:
    """Relations touching the item whose other end the caller may also get (a relation must not disclose): the same
    test `servable` makes of an item — a surfaceable status, a sensitivity under the ceiling, a current revision —
    so a retired item's id (and the relation's note about it) is withheld here exactly as `get` withholds it."""
    rows = rows_as_dicts(
        reading.db.execute(
            "SELECT source_item_id, relation_type, target_item_id, note FROM relations r "  # noqa: S608
            "JOIN knowledge_items o ON o.project_id = r.project_id AND o.item_id = "
            "CASE WHEN r.source_item_id = ? THEN r.target_item_id ELSE r.source_item_id END "
            "WHERE r.project_id = ? AND ? IN (r.source_item_id, r.target_item_id) "
            f"AND o.sensitivity IN ({reading.allowed_sql}) AND o.status IN ({SURFACEABLE_SQL}) "
            "AND o.current_revision_id IS NOT NULL ORDER BY 1, 2, 3",
            (item_id, reading.key, item_id),
        )
    )
    return [
        {
            "sourceItemId": r["source_item_id"],
            "relationType": r["relation_type"],
            "targetItemId": r["target_item_id"],
            "note": r["note"],
        }
        for r in rows
    ]


def _evidence(reading: Reading, item_id: str) -> list[dict[str, Any]]:
    rows = reading.db.execute(
        "SELECT anchor, description, confidence FROM evidence WHERE project_id = ? AND "
        "item_id = ? ORDER BY source_uri",
        (reading.key, item_id),
    ).fetchall()
    return [{"anchor": orjson.loads(a), "description": d, "confidence": c} for a, d, c in rows]
