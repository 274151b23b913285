"""Writing migrations the way an author does: YAML files under .theurian/migrations, bodies under knowledge/."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "fixtures" / "knowledge" / "sample"
_serial = count(1)


def ulid_like(prefix: str = "01K2") -> str:
    """A valid, unique, increasing ULID for tests (Crockford digits only)."""
    return f"{prefix}{next(_serial):022d}"


def copy_sample(destination: Path) -> Path:
    """The bundled sample project (two migrations, five bodies) copied to `destination`."""
    shutil.copytree(SAMPLE, destination, dirs_exist_ok=True)
    return destination


def anchor(uri: str = "git://backend/README.md") -> dict[str, Any]:
    return {"provider": "git", "sourceUri": uri, "repository": "backend", "filePath": "README.md",
            "lineStart": 1, "lineEnd": 10}


@dataclass
class MigrationWriter:
    """Builds one migration's operations, then writes it (and its bodies) into a project."""

    root: Path
    created_at: str = "2026-08-01T09:00:00+09:00"
    depends_on: list[str] = field(default_factory=list)
    operations: list[dict[str, Any]] = field(default_factory=list)
    migration_id: str = field(default_factory=ulid_like)

    def item(self, item_id: str, body: str, *, title: str | None = None, status: str = "approved",
             sensitivity: str = "internal", kind: str = "architecture", expected: str | None = None,
             create: bool = True, **metadata: Any) -> str:
        """createItem (unless `create` is False) + upsertRevision; returns the revision id."""
        if create:
            self.operations.append({"op": "createItem", "itemId": item_id, "kind": kind, "namespace": "backend",
                                    "owner": "platform-team", "sensitivity": sensitivity})
        revision = ulid_like("01K3")
        content = f"knowledge/{item_id}-{revision}.md"
        path = self.root / ".theurian" / content
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
        meta = {"title": title or item_id, "contentType": "text/markdown", "kind": kind, "namespace": "backend",
                "status": status, "owner": "platform-team", "trustLevel": "reviewed", "sensitivity": sensitivity,
                "sourceAnchors": [anchor()]} | metadata
        operation = {"op": "upsertRevision", "itemId": item_id, "revisionId": revision,
                     "contentFile": f"../{content}",
                     "contentSha256": "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest(),
                     "metadata": meta}
        if expected is not None:
            operation["expectedRevision"] = expected
        self.operations.append(operation)
        return revision

    def op(self, **operation: Any) -> MigrationWriter:
        self.operations.append(operation)
        return self

    def document(self) -> dict[str, Any]:
        return {"apiVersion": "theurian.dev/v1", "id": self.migration_id, "createdAt": self.created_at,
                "author": "tests", "dependsOn": self.depends_on, "description": "written by a test",
                "operations": self.operations}

    def write(self, slug: str = "change") -> Path:
        folder = self.root / ".theurian" / "migrations"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.migration_id}-{slug}.yaml"
        path.write_text(yaml.safe_dump(self.document(), sort_keys=False), encoding="utf-8")
        return path
