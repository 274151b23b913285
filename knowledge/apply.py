"""`theurian migrate apply` and `migrate status`: verify every migration, then build a new state and point at
it.

Apply is all-or-nothing. Every file is validated (schema, semantics, body hashes) and every migration the
active state recorded must still be on disk with the checksum it was applied with, before anything is built.
The new database replays every migration in order, records each one's checksum and the expected surfaceable
count in the same transaction, and only then does the pointer move. Any failure discards the half-built file.

Replaying everything (rather than copying the old database and adding the pending ones) is deliberate: the
state is derived, so a rebuild from sources is also the cure for a damaged one, and the hash of a state
depends only on the migrations that made it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ulid import ULID

from knowledge import CANONICAL_SCHEMA_VERSION
from knowledge.builds import build_lock, sweep
from knowledge.errors import (
    MigrationChecksumMismatchError,
    MigrationInvalidError,
    SecretInTextError,
    SourceUnreadable,
    StateBusyError,
    StateNotAsBuiltError,
    StateUnreadableError,
)
from knowledge.integrity import surfaceable_count
from knowledge.migration_gate import MIGRATION_NOTHING_DONE, gate_migrations
from knowledge.migrations import (
    MAX_MIGRATION_BYTES,
    Migration,
    load_migration,
    migration_files,
    read_source,
    sha256_checksum,
)
from knowledge.rehearsal import check_ids, check_order, replay_all
from knowledge.secret_gate import refuse_secrets
from knowledge.state import (
    HASHED_TABLES,
    STATE_FILE,
    Pointer,
    create_database,
    open_read_only,
    project_key,
    read_pointer,
    state_folder,
    state_hash,
    state_read_failure,
    stored_rows,
    write_pointer,
)
from knowledge.state_stamp import check_state, stamp_state
from theurian.containment import resolve_inside
from theurian.durable import fsync_file
from theurian.installation import build_stamp_secret
from theurian.project import KNOWLEDGE_STATE_PREFIX, MIGRATIONS_DIR
from theurian.registry import default_project_id


@dataclass(frozen=True)
class Applied:
    file_name: str
    migration_id: str
    checksum: str


# How `doctor` and `migrate status` name a state whose history is not trusted (MigrationStatus.refused).
REFUSED_STATE: Final = "the active state is not this installation's build, or is damaged; its history is not trusted"
REFUSED_STATE_CURE: Final = "`theurian migrate apply` (rebuilds it from every migration)"


@dataclass(frozen=True)
class MigrationStatus:
    applied: list[Applied]
    pending: list[str]
    edited: list[str]  # applied files whose bytes changed since (or that are gone)
    # The active state is not this installation's build, or is damaged: its history is not trusted, so every
    # migration reads as pending, and `migrate apply` rebuilds the state from all of them.
    refused: bool = False
    removed: list[str] = field(default_factory=list)  # those of `edited` that are gone, as `migrate apply` says


@dataclass(frozen=True)
class ApplyOutcome:
    applied_now: list[str]
    pointer: Pointer
    rebuilt: bool  # a new database was built (False: nothing pending and the active state is healthy)


def recorded_migrations(root: Path) -> tuple[Pointer | None, list[Applied], bool]:
    """The active pointer, the migrations its state recorded (in order), and whether damage was detected.

    Raises:
        StateBusyError: another process holds a lock on the state. Read as damage, it would be rebuilt over (and
            its applied history, which the checksum check reads, skipped).
    """
    pointer = read_pointer(root)
    if pointer is None:
        return None, [], False
    try:
        connection = open_read_only(root, pointer)
    except StateBusyError:
        raise
    except StateUnreadableError:
        return pointer, [], True
    with contextlib.closing(connection):
        try:
            key = project_key(connection)
            rows = connection.execute(
                "SELECT file_name, migration_id, checksum FROM migration_history "
                "WHERE project_id = ? ORDER BY position",
                (key,),
            ).fetchall()
            # Not trusted until it is this installation's own build: a planted or edited state's history is no
            # record of what was applied, so such a state is rebuilt from every migration.
            damaged = check_state(connection, key, pointer.migration_count, build_stamp_secret())
        except StateNotAsBuiltError:
            return pointer, [], True
        except sqlite3.DatabaseError as exc:
            failure = state_read_failure(exc)
            if isinstance(failure, StateBusyError):
                raise failure from exc
            return pointer, [], True
    return pointer, [Applied(*row) for row in rows], damaged


def migration_status(root: Path) -> MigrationStatus:
    """Which files the active state applied, which are pending, and which applied ones were edited."""
    pointer, applied, damaged = recorded_migrations(root)
    if damaged:  # a damaged state's history (which its counts contradict) is no record of what was applied
        applied = []
    files = migration_files(root)
    done = {a.file_name for a in applied}
    edited = [
        a.file_name for a in applied
        if (a.file_name not in files or _checksum(root, a.file_name) != a.checksum)
        and not (pointer is not None and _applied_a_secret(root, pointer, a.migration_id))
    ]
    return MigrationStatus(applied, [name for name in files if name not in done], edited, refused=damaged,
                           removed=[name for name in edited if name not in files])


def apply_migrations(root: Path) -> ApplyOutcome:
    """Validate everything, then build a new state from every migration and make it active.

    Raises:
        MigrationInvalidError, MigrationChecksumMismatchError, RevisionConflictError, SecretInTextError: nothing
            was changed.
    """
    names = migration_files(root)
    migrations = [load_migration(root, name) for name in names]
    check_ids(migrations)
    gate_migrations(root, migrations, make_salt=True)  # nothing holding a secret ever enters the state
    # Validation reads only sources; from reading the pointer to the sweep, one build per project at a time.
    with build_lock(state_folder(root)):
        return _apply_locked(root, migrations)


def _apply_locked(root: Path, migrations: list[Migration]) -> ApplyOutcome:
    pointer, applied, damaged = recorded_migrations(root)
    by_name = {m.file_name: m for m in migrations}
    for record in applied:
        current = by_name.get(record.file_name)
        if current is None or current.checksum != record.checksum:
            if pointer is not None and _applied_a_secret(root, pointer, record.migration_id):
                # The one edit an applied migration admits: taking out a secret a state built before the gate
                # (or under a withdrawn acknowledgement) holds. Its history is no longer a record to keep.
                damaged = True
                continue
            raise MigrationChecksumMismatchError(
                record.file_name, recorded=record.checksum, actual=current.checksum if current else None
            )
    check_order(migrations)
    done = {a.file_name for a in applied}
    pending = [m.file_name for m in migrations if m.file_name not in done]
    if pointer is not None and not pending and not damaged:
        return ApplyOutcome([], pointer, rebuilt=False)
    new_pointer = _build(root, migrations)
    return ApplyOutcome(pending, new_pointer, rebuilt=True)


def _build(root: Path, migrations: list[Migration]) -> Pointer:
    folder = state_folder(root)
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{KNOWLEDGE_STATE_PREFIX}{ULID()}.sqlite"
    path = folder / name
    key = default_project_id(root) or "project"
    secret = build_stamp_secret()
    try:
        connection = create_database(path, key)
        with contextlib.closing(connection):
            replay_all(connection, key, migrations)
            connection.execute(
                "INSERT INTO project_integrity VALUES (?, ?)", (key, surfaceable_count(connection, key))
            )
            # Every canonical table read once, for the state hash and the stamp's digest alike.
            read = {table: stored_rows(connection, table) for table in HASHED_TABLES}
            digest = state_hash(connection, read)
            connection.execute("INSERT INTO meta VALUES ('state_hash', ?)", (digest,))
            stamp_state(connection, secret, read)
            connection.execute("COMMIT")
        fsync_file(path)  # SQLite did not sync it (`create_database`); the pointer's write syncs the folder
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    pointer = Pointer(name, digest, len(migrations), CANONICAL_SCHEMA_VERSION)
    write_pointer(root, pointer)
    sweep(folder, STATE_FILE, KNOWLEDGE_STATE_PREFIX, (name, _pointed_at(root)))
    return pointer


def _applied_a_secret(root: Path, pointer: Pointer, migration_id: str) -> bool:
    """Whether a revision the active state holds from migration `migration_id` holds a secret the gate refuses."""
    try:
        connection = open_read_only(root, pointer)
    except StateUnreadableError:
        return False
    with contextlib.closing(connection):
        try:
            rows = connection.execute(
                "SELECT content_file, title, body FROM revisions WHERE migration_id = ?", (migration_id,)
            ).fetchall()
        except sqlite3.DatabaseError:
            return False
    texts = [(str(file), str(text)) for file, title, body in rows for text in (title, body)]
    try:
        refuse_secrets(root, texts, nothing_done=MIGRATION_NOTHING_DONE)
    except SecretInTextError:
        return True
    return False


def _pointed_at(root: Path) -> str | None:
    """The database the pointer on disk names: whoever wrote it, the sweep never removes it."""
    try:
        current = read_pointer(root)
    except StateUnreadableError:
        return None
    return current.state_file if current else None


def _checksum(root: Path, file_name: str) -> str:
    try:
        return sha256_checksum(read_source(resolve_inside(root, f"{MIGRATIONS_DIR}/{file_name}"), MAX_MIGRATION_BYTES))
    except SourceUnreadable as exc:
        raise MigrationInvalidError(file_name, None, f"the file is {exc.reason}") from exc
