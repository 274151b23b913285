"""Checks every migration must pass, the replay of all of them into a new database, and a rehearsal of that
replay in memory: what `migrate apply` builds from, and what `migrate validate` and `propose accept` ask before
anything lands.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from knowledge.errors import MigrationInvalidError
from knowledge.migration_gate import gate_migrations
from knowledge.migrations import Migration, load_migration, migration_files
from knowledge.operations import Replay
from knowledge.state import create_database
from theurian.registry import default_project_id


def check_ids(migrations: list[Migration]) -> None:
    # One id, one migration: the history is keyed by id, so a second file under it could never be recorded.
    named: dict[str, str] = {}
    for migration in migrations:
        earlier = named.setdefault(migration.migration_id, migration.file_name)
        if earlier != migration.file_name:
            raise MigrationInvalidError(
                migration.file_name,
                None,
                f"it and {earlier} share the id {migration.migration_id}; a migration id names exactly one "
                "file, so give one of them a new ULID (file name and `id`)",
            )


def check_order(migrations: list[Migration]) -> None:
    seen: set[str] = set()
    for migration in migrations:
        missing = [d for d in migration.depends_on if d not in seen]
        if missing:
            raise MigrationInvalidError(
                migration.file_name,
                None,
                f"`dependsOn` names {', '.join(missing)}, "
                "which is not a migration that applies before this one",
            )
        seen.add(migration.migration_id)


def replay_all(connection: sqlite3.Connection, key: str, migrations: list[Migration]) -> None:
    """Every migration into the new database `connection`, in order, each recorded in its history.

    Raises:
        MigrationInvalidError: an operation cannot apply (naming the file and the operation), or an item is left
            without a revision.
    """
    connection.row_factory = sqlite3.Row
    for position, migration in enumerate(migrations):
        Replay(connection, key, migration).run()
        connection.execute(
            "INSERT INTO migration_history VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, position, migration.migration_id, migration.file_name, migration.checksum, migration.created_at,
             migration.author),
        )
    _require_revisions(connection, key, migrations)


def rehearse_with(root: Path, candidate: Migration) -> None:
    """Replay the project's migrations and `candidate`, in apply order, into a database in memory (nothing on disk
    changes), raising what `migrate apply` would raise once `candidate` landed: what `propose accept` asks before a
    migration lands where every later apply would meet it.

    Raises:
        MigrationInvalidError: the first thing `migrate apply` would refuse, naming the file it is in.
    """
    # Under its own name the candidate is already there only when an accept stopped just after linking it in.
    others = [load_migration(root, name) for name in migration_files(root) if name != candidate.file_name]
    _rehearse_all(root, sorted([*others, candidate], key=lambda migration: migration.file_name), make_salt=True)


def rehearse(root: Path, *, make_salt: bool = False) -> list[Migration]:
    """Validate every migration and body, and replay them all into a database in memory: what `migrate apply`
    would refuse, found without applying anything (`theurian migrate validate`). `make_salt`: a secret found makes
    the project's salt, as `migrate apply` does, so its refusal names the fingerprint to acknowledge (doctor, which
    writes nothing, leaves it False).

    Raises:
        MigrationInvalidError: the first thing `migrate apply` would refuse, naming the file it is in.
    """
    migrations = [load_migration(root, name) for name in migration_files(root)]
    _rehearse_all(root, migrations, make_salt=make_salt)
    return migrations


def _rehearse_all(root: Path, migrations: list[Migration], *, make_salt: bool) -> None:
    check_ids(migrations)
    gate_migrations(root, migrations, make_salt=make_salt)
    check_order(migrations)
    key = default_project_id(root) or "project"
    connection = create_database(Path(":memory:"), key)
    with contextlib.closing(connection):
        replay_all(connection, key, migrations)


def _require_revisions(connection: sqlite3.Connection, key: str, migrations: list[Migration]) -> None:
    row = connection.execute(
        "SELECT item_id FROM knowledge_items WHERE project_id = ? AND current_revision_id IS "
        "NULL ORDER BY item_id LIMIT 1",
        (key,),
    ).fetchone()
    if row is None:
        return
    for migration in migrations:
        for index, op in enumerate(migration.operations):
            if op["op"] == "createItem" and op["itemId"] == row[0]:
                raise MigrationInvalidError(
                    migration.file_name,
                    index,
                    f"item {row[0]} is created but no migration gives it a revision (upsertRevision)",
                )
    raise MigrationInvalidError(migrations[-1].file_name, None, f"item {row[0]} has no revision")
