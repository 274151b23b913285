"""The fourteen operation kinds, each replayed into a state database being built.

An operation that cannot apply (an item that does not exist, a duplicate alias, a relation that is not there)
raises `MigrationInvalidError` naming the file, the operation index and the problem; a mismatched
`expectedRevision` raises `RevisionConflictError`. Either way the half-built database is discarded by the
caller, so nothing changes.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from typing import Any

import orjson

from knowledge.errors import MigrationInvalidError, RevisionConflictError
from knowledge.migrations import Migration
from knowledge.vocabulary import DEFAULT_SENSITIVITY, DEFAULT_TRUST_LEVEL, parse_rfc3339, utc_key

Operation = dict[str, Any]


class Replay:
    """Applies one migration's operations to `connection` under `key` (the project's rows)."""

    def __init__(self, connection: sqlite3.Connection, key: str, migration: Migration) -> None:
        self.db = connection
        self.key = key
        self.migration = migration
        self.index = 0

    def run(self) -> None:
        handlers: dict[str, Callable[[Operation], None]] = {
            "createItem": self.create_item,
            "upsertRevision": self.upsert_revision,
            "deprecateItem": self.deprecate_item,
            "restoreItem": self.restore_item,
            "addRelation": self.add_relation,
            "removeRelation": self.remove_relation,
            "addAlias": self.add_alias,
            "removeAlias": self.remove_alias,
            "changeSensitivity": self.change_sensitivity,
            "changeOwner": self.change_owner,
            "registerSpecification": self.register_specification,
            "supersedeSpecification": self.supersede_specification,
            "addEvidence": self.add_evidence,
            "removeEvidence": self.remove_evidence,
        }
        for index, operation in enumerate(self.migration.operations):
            self.index = index
            handlers[operation["op"]](operation)

    def fail(self, problem: str) -> MigrationInvalidError:
        return MigrationInvalidError(self.migration.file_name, self.index, problem)

    def item(self, item_id: str) -> sqlite3.Row:
        row = self.db.execute(
            "SELECT * FROM knowledge_items WHERE project_id = ? AND item_id = ?", (self.key, item_id)
        ).fetchone()
        if row is None:
            raise self.fail(f"item {item_id} does not exist")
        return row  # type: ignore[no-any-return]

    def exists(self, sql: str, *args: Any) -> bool:
        return self.db.execute(sql, (self.key, *args)).fetchone() is not None

    def set_item(self, item_id: str, **columns: Any) -> None:
        self.db.execute(_update_sql(tuple(columns)), (*columns.values(), self.key, item_id))

    def create_item(self, op: Operation) -> None:
        # The key's conflict is the existence check (one statement, not a SELECT before each INSERT).
        inserted = self.db.execute(
            "INSERT INTO knowledge_items (project_id, item_id, kind, namespace, owner, status, trust_level, "
            "sensitivity, labels, scope_paths) VALUES (?, ?, ?, ?, ?, 'draft', ?, ?, '[]', '[]') "
            "ON CONFLICT (project_id, item_id) DO NOTHING",
            (
                self.key,
                op["itemId"],
                op["kind"],
                op["namespace"],
                op["owner"],
                op.get("trustLevel", DEFAULT_TRUST_LEVEL),
                op.get("sensitivity", DEFAULT_SENSITIVITY),
            ),
        )
        if inserted.rowcount == 0:
            raise self.fail(f"item {op['itemId']} already exists")

    def upsert_revision(self, op: Operation) -> None:
        # Only the current revision is read: the whole row as an sqlite3.Row cost a third of the statement.
        found = self.db.execute(
            "SELECT current_revision_id FROM knowledge_items WHERE project_id = ? AND item_id = ?",
            (self.key, op["itemId"]),
        ).fetchone()
        if found is None:
            raise self.fail(f"item {op['itemId']} does not exist")
        current = found[0]
        if "expectedRevision" in op and op["expectedRevision"] != current:
            raise RevisionConflictError(
                self.migration.file_name,
                self.index,
                item_id=op["itemId"],
                expected=op["expectedRevision"],
                actual=current,
            )
        meta = op["metadata"]
        body, sha = self.migration.bodies[op["contentFile"]]
        anchors = [_anchor(a) for a in meta["sourceAnchors"]]
        inserted = self.db.execute(
            "INSERT INTO revisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (project_id, revision_id) DO NOTHING",
            (
                self.key,
                op["revisionId"],
                op["itemId"],
                meta["title"],
                body,
                meta["contentType"],
                meta["status"],
                self.migration.created_at,
                op["contentFile"],
                sha,
                orjson.dumps(anchors).decode(),
                int(meta.get("originatesInTheurian", False)),
                self.migration.migration_id,
            ),
        )
        if inserted.rowcount == 0:
            raise self.fail(f"revision {op['revisionId']} already exists")
        valid_from, valid_to = meta.get("validFrom"), meta.get("validTo")
        self.set_item(
            op["itemId"],
            kind=meta["kind"],
            namespace=meta["namespace"],
            owner=meta["owner"],
            status=meta["status"],
            trust_level=meta["trustLevel"],
            sensitivity=meta["sensitivity"],
            valid_from=valid_from,
            valid_to=valid_to,
            valid_from_utc=utc_key(parse_rfc3339(valid_from)) if valid_from else None,
            valid_to_utc=utc_key(parse_rfc3339(valid_to)) if valid_to else None,
            labels=orjson.dumps(sorted(meta.get("labels", []))).decode(),
            scope_paths=orjson.dumps(meta.get("scopePaths", [])).decode(),
            current_revision_id=op["revisionId"],
            status_reason=None,
            superseded_by=None,
        )

    def deprecate_item(self, op: Operation) -> None:
        self.item(op["itemId"])
        successor = op.get("supersededBy")
        if successor is not None:
            self.item(successor)
        self.set_item(
            op["itemId"],
            status="superseded" if successor else "deprecated",
            status_reason=op.get("reason"),
            superseded_by=successor,
        )

    def restore_item(self, op: Operation) -> None:
        item = self.item(op["itemId"])
        if item["status"] not in ("deprecated", "superseded", "rejected"):
            raise self.fail(f"item {op['itemId']} is {item['status']}, not retired")
        revision = self.db.execute(
            "SELECT status FROM revisions WHERE project_id = ? AND revision_id = ?",
            (self.key, item["current_revision_id"]),
        ).fetchone()
        status = (
            revision["status"]
            if revision and revision["status"] not in ("deprecated", "superseded")
            else "draft"
        )
        self.set_item(op["itemId"], status=status, status_reason=op.get("reason"), superseded_by=None)

    def add_relation(self, op: Operation) -> None:
        self.item(op["sourceItemId"])
        self.item(op["targetItemId"])
        key = (op["sourceItemId"], op["relationType"], op["targetItemId"])
        if self._relation_exists(*key):
            raise self.fail(f"relation {' '.join(key)} already exists")
        self.db.execute("INSERT INTO relations VALUES (?, ?, ?, ?, ?)", (self.key, *key, op.get("note")))

    def remove_relation(self, op: Operation) -> None:
        key = (op["sourceItemId"], op["relationType"], op["targetItemId"])
        if not self._relation_exists(*key):
            raise self.fail(f"relation {' '.join(key)} does not exist")
        self.db.execute(
            "DELETE FROM relations WHERE project_id = ? AND source_item_id = ? AND relation_type = ? "
            "AND target_item_id = ?",
            (self.key, *key),
        )

    def _relation_exists(self, source: str, relation: str, target: str) -> bool:
        return self.exists(
            "SELECT 1 FROM relations WHERE project_id = ? AND source_item_id = ? AND "
            "relation_type = ? AND target_item_id = ?",
            source,
            relation,
            target,
        )

    def add_alias(self, op: Operation) -> None:
        self.item(op["itemId"])
        if self.exists("SELECT 1 FROM aliases WHERE project_id = ? AND alias = ?", op["alias"]):
            raise self.fail(f"alias {op['alias']} is already taken")
        self.db.execute("INSERT INTO aliases VALUES (?, ?, ?)", (self.key, op["alias"], op["itemId"]))

    def remove_alias(self, op: Operation) -> None:
        if not self.exists("SELECT 1 FROM aliases WHERE project_id = ? AND alias = ?", op["alias"]):
            raise self.fail(f"alias {op['alias']} does not exist")
        self.db.execute("DELETE FROM aliases WHERE project_id = ? AND alias = ?", (self.key, op["alias"]))

    def change_sensitivity(self, op: Operation) -> None:
        self.item(op["itemId"])
        self.set_item(op["itemId"], sensitivity=op["sensitivity"])

    def change_owner(self, op: Operation) -> None:
        self.item(op["itemId"])
        self.set_item(op["itemId"], owner=op["owner"])

    def register_specification(self, op: Operation) -> None:
        self.item(op["itemId"])
        if self.exists("SELECT 1 FROM specifications WHERE project_id = ? AND spec_id = ?", op["specId"]):
            raise self.fail(f"specification {op['specId']} is already registered")
        self.db.execute(
            "INSERT INTO specifications VALUES (?, ?, ?, ?, ?, ?, NULL)",
            (self.key, op["specId"], op["itemId"], op["sourceUri"], op["format"], op.get("status", "active")),
        )

    def supersede_specification(self, op: Operation) -> None:
        for spec in (op["specId"], op["supersededBy"]):
            if not self.exists("SELECT 1 FROM specifications WHERE project_id = ? AND spec_id = ?", spec):
                raise self.fail(f"specification {spec} is not registered")
        self.db.execute(
            "UPDATE specifications SET status = 'superseded', superseded_by = ? "
            "WHERE project_id = ? AND spec_id = ?",
            (op["supersededBy"], self.key, op["specId"]),
        )

    def add_evidence(self, op: Operation) -> None:
        self.item(op["itemId"])
        uri = op["anchor"]["sourceUri"]
        if self.exists(
            "SELECT 1 FROM evidence WHERE project_id = ? AND item_id = ? AND source_uri = ?",
            op["itemId"],
            uri,
        ):
            raise self.fail(f"item {op['itemId']} already has evidence from {uri}")
        self.db.execute(
            "INSERT INTO evidence VALUES (?, ?, ?, ?, ?, ?)",
            (
                self.key,
                op["itemId"],
                uri,
                orjson.dumps(_anchor(op["anchor"])).decode(),
                op["description"],
                float(op["confidence"]),
            ),
        )

    def remove_evidence(self, op: Operation) -> None:
        if not self.exists(
            "SELECT 1 FROM evidence WHERE project_id = ? AND item_id = ? AND source_uri = ?",
            op["itemId"],
            op["sourceUri"],
        ):
            raise self.fail(f"item {op['itemId']} has no evidence from {op['sourceUri']}")
        self.db.execute(
            "DELETE FROM evidence WHERE project_id = ? AND item_id = ? AND source_uri = ?",
            (self.key, op["itemId"], op["sourceUri"]),
        )


@functools.cache
def _update_sql(columns: tuple[str, ...]) -> str:
    """The UPDATE of `columns` of one item: built once per column set (a replay sets the same few sets for every
    item), not once per operation. The names come from this module's code, never from a migration."""
    assignments = ", ".join(f"{name} = ?" for name in columns)
    return f"UPDATE knowledge_items SET {assignments} WHERE project_id = ? AND item_id = ?"  # noqa: S608


ANCHOR_KEYS = ("provider", "sourceUri", "repository", "commitSha", "filePath", "lineStart", "lineEnd")


def _anchor(anchor: dict[str, Any]) -> dict[str, Any]:
    """Every anchor key present, absent ones as null, so a served anchor always has the same key set."""
    return {key: anchor.get(key) for key in ANCHOR_KEYS}
