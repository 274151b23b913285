"""Two `migrate apply` or two `index build` processes racing on one project.

Each build used to write its pointer and then unlink every build but its own, so the loser's sweep could delete
the file the winner's pointer names (or the other way round). The processes here are real: each imports
everything, reports ready, and waits on its stdin, so both start their build at the same moment; every wait is
bounded by a timeout, and nothing sleeps.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from knowledge.apply import apply_migrations
from knowledge.index_pointer import INDEX_POINTER_NAME
from knowledge.state import POINTER_NAME
from tests.knowledge.authoring import REPO, anchor, ulid_like
from tests.support.installation import Installation

STATE = Path(".theurian/state")
WAIT_SECONDS = 180
TRIALS = 3
_RACER = """
import sys
from pathlib import Path
from knowledge.apply import apply_migrations
from knowledge.index import build_index
root = Path(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
if sys.argv[1] == "apply":
    apply_migrations(root)
else:
    build_index(root, "internal")
print("done", flush=True)
"""


def _large_project(root: Path, items: int) -> Path:
    """One migration of `items` approved items (written as JSON, which is YAML, to keep setup fast)."""
    knowledge = root / ".theurian" / "knowledge" / "bulk"
    knowledge.mkdir(parents=True)
    operations: list[dict[str, Any]] = []
    for n in range(items):
        item_id = f"bulk.item-{n}"
        body = f"Item {n} says the lock order is orders then payments, variant {n}.".encode()
        (knowledge / f"{n}.md").write_bytes(body)
        operations.append({"op": "createItem", "itemId": item_id, "kind": "convention", "namespace": "bulk",
                           "owner": "platform-team"})
        operations.append({"op": "upsertRevision", "itemId": item_id, "revisionId": ulid_like("01K3"),
                           "contentFile": f"../knowledge/bulk/{n}.md",
                           "contentSha256": "sha256:" + hashlib.sha256(body).hexdigest(),
                           "metadata": {"title": f"Lock order {n}", "contentType": "text/markdown",
                                        "kind": "convention", "namespace": "bulk", "status": "approved",
                                        "owner": "platform-team", "trustLevel": "reviewed",
                                        "sensitivity": "internal", "sourceAnchors": [anchor()]}})
    migration_id = ulid_like()
    document = {"apiVersion": "theurian.dev/v1", "id": migration_id, "createdAt": "2026-08-01T09:00:00Z",
                "author": "tests", "dependsOn": [], "description": "bulk", "operations": operations}
    folder = root / ".theurian" / "migrations"
    folder.mkdir(parents=True)
    (folder / f"{migration_id}-bulk.yaml").write_bytes(orjson.dumps(document))
    return root


def _race(installation: Installation, command: str, root: Path) -> None:
    """Start two racers, release them together, and wait (bounded) for both to finish cleanly."""
    racers = [
        subprocess.Popen([sys.executable, "-c", _RACER, command, str(root)], cwd=REPO, env=installation.env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    try:
        for racer in racers:
            assert racer.stdout is not None and racer.stdout.readline() == "ready\n"
        for racer in racers:
            assert racer.stdin is not None
            racer.stdin.write("go\n")
            racer.stdin.flush()
        for racer in racers:
            out, err = racer.communicate(timeout=WAIT_SECONDS)
            assert racer.returncode == 0, err
    finally:
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
                racer.wait(timeout=WAIT_SECONDS)


def _named(root: Path, pointer: str, key: str) -> Path:
    return root / STATE / str(json.loads((root / STATE / pointer).read_text(encoding="utf-8"))[key])


def test_two_applies_at_once_leave_the_pointer_naming_a_database_that_exists(installation: Installation,
                                                                              tmp_path: Path) -> None:
    root = _large_project(tmp_path / "project", 4000)
    for _ in range(TRIALS):
        shutil.rmtree(root / STATE, ignore_errors=True)
        _race(installation, "apply", root)
        assert _named(root, POINTER_NAME, "stateFile").is_file()
        assert sorted(p.name for p in (root / STATE).glob("knowledge-state-*")) == [
            _named(root, POINTER_NAME, "stateFile").name
        ]


def test_two_index_builds_at_once_leave_the_index_pointer_naming_an_index_that_exists(
        installation: Installation, tmp_path: Path) -> None:
    root = _large_project(tmp_path / "project", 8000)
    apply_migrations(root)
    for _ in range(TRIALS):
        for stale in [*(root / STATE).glob("knowledge-index*")]:
            stale.unlink()
        _race(installation, "index", root)
        assert _named(root, INDEX_POINTER_NAME, "indexFile").is_file()
        assert sorted(p.name for p in (root / STATE).glob("knowledge-index-*")) == [
            _named(root, INDEX_POINTER_NAME, "indexFile").name
        ]
