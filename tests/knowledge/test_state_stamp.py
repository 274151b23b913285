"""The knowledge state's build stamp over real SQLite files: what is refused (an edit no count sees, another
installation's state, no stamp, a superseded one, a foreign table, a value no build writes), what keeps the
contract's integrity key, what `migrate apply` then rebuilds, and the verify-once cache per file identity."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest

from knowledge import CANONICAL_SCHEMA_VERSION
from knowledge.apply import apply_migrations, migration_status
from knowledge.errors import StateNotAsBuiltError, StateUnreadableError
from knowledge.index import build_index
from knowledge.integrity import INTEGRITY_REMEDY
from knowledge.reading import StateDamagedError, get_item, status_of
from knowledge.state import POINTER_NAME, STATE_UNREADABLE, open_read_only, project_key, read_pointer
from knowledge.state_stamp import STORE_KIND, verified_damage
from tests.knowledge.authoring import copy_sample
from theurian.installation import HOME_OVERRIDE_ENV, build_stamp_secret
from theurian.project import Project
from theurian.stamp import StampFields, compute_stamp
from theurian.stamped_store import SETTLED_NS, SQLITE_WAL_SUFFIX, VerifiedStores, file_identity, wal_path

STATE = Path(".theurian/state")
ITEM = "architecture.auth-policy"
EDIT_BODY = ("UPDATE revisions SET body = 'Planted.' WHERE revision_id = "
             "(SELECT current_revision_id FROM knowledge_items WHERE item_id = 'architecture.auth-policy')")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = copy_sample(tmp_path / "sample")
    apply_migrations(root)
    return Project("demo", root)


def _state_file(root: Path) -> Path:
    pointer = json.loads((root / STATE / POINTER_NAME).read_text(encoding="utf-8"))
    return root / STATE / pointer["stateFile"]


def _edit(root: Path, sql: str, *args: object) -> None:
    with sqlite3.connect(_state_file(root)) as connection:
        connection.execute(sql, args)


def _refused(project: Project) -> StateDamagedError:
    with pytest.raises(StateDamagedError) as caught:
        status_of(project, "internal")
    return caught.value


def _reason(project: Project) -> str:
    cause = _refused(project).__cause__
    assert isinstance(cause, StateNotAsBuiltError)
    return cause.reason


def test_a_revision_body_edited_with_sqlite3_is_refused_with_the_integrity_cure(project: Project) -> None:
    before = get_item(project, "internal", ITEM, repr(ITEM))
    _edit(project.root, EDIT_BODY)
    with pytest.raises(StateDamagedError) as caught:
        get_item(project, "internal", ITEM, repr(ITEM))
    assert caught.value.message == ("Project 'demo' could not be fully read: its derived state disagrees with its "
                                    f"own records about what it holds. {INTEGRITY_REMEDY}")
    assert _reason(project) == "damaged: its rows are not the rows its build stamped"
    assert migration_status(project.root).applied == []  # its recorded history is no longer trusted
    outcome = apply_migrations(project.root)
    assert outcome.rebuilt and outcome.pointer.state_hash == before["provenance"]["stateHash"]
    assert get_item(project, "internal", ITEM, repr(ITEM))["body"] == before["body"]


def test_a_state_copied_from_another_installation_is_refused_and_apply_rebuilds_it(
        project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HOME_OVERRIDE_ENV, str(tmp_path / "another-installation"))
    assert _reason(project) == "a stamp this installation did not make"
    assert apply_migrations(project.root).rebuilt
    assert status_of(project, "internal")["itemCount"] == 2


def test_a_state_without_a_stamp_is_refused(project: Project) -> None:
    _edit(project.root, "DELETE FROM build_stamp")
    assert _reason(project) == "no single build stamp"
    _edit(project.root, "DROP TABLE build_stamp")
    assert _reason(project) == "no build stamp"


def test_a_state_stamped_here_by_a_superseded_schema_is_refused(project: Project) -> None:
    with sqlite3.connect(_state_file(project.root)) as connection:
        row = connection.execute("SELECT store, schema_version, format_version, build_id, row_count, row_digest "
                                 "FROM build_stamp").fetchone()
        old = StampFields(row[0], CANONICAL_SCHEMA_VERSION - 1, *row[2:])
        connection.execute("UPDATE build_stamp SET schema_version = ?, stamp = ?",
                           (old.schema_version, compute_stamp(old, build_stamp_secret())))
    assert _reason(project).startswith("stale")


def test_a_stamp_of_another_kind_of_store_is_refused(project: Project) -> None:
    with sqlite3.connect(_state_file(project.root)) as connection:
        row = connection.execute("SELECT store, schema_version, format_version, build_id, row_count, row_digest "
                                 "FROM build_stamp").fetchone()
        moved = StampFields("findings", *row[1:])
        connection.execute("UPDATE build_stamp SET store = ?, stamp = ?",
                           (moved.store, compute_stamp(moved, build_stamp_secret())))
    assert _reason(project).startswith("stale")


def test_a_table_or_view_no_build_creates_is_refused(project: Project) -> None:
    _edit(project.root, "CREATE VIEW planted AS SELECT 1")
    assert _reason(project) == "damaged: its tables are not the tables a build creates"


def test_a_value_of_a_storage_class_no_build_writes_is_refused_not_a_crash(project: Project) -> None:
    _edit(project.root, "UPDATE revisions SET title = x'00ff' WHERE revision_id = "
                        "(SELECT current_revision_id FROM knowledge_items WHERE item_id = ?)", ITEM)
    assert _reason(project) == "damaged: it holds a value no build writes"


def test_a_real_that_is_not_finite_is_refused_as_a_value_no_build_writes(project: Project) -> None:
    _edit(project.root, "UPDATE evidence SET confidence = 1e999 WHERE rowid = (SELECT min(rowid) FROM evidence)")
    assert _reason(project) == "damaged: it holds a value no build writes"


def test_an_edited_confidence_is_seen_to_the_last_bit(project: Project) -> None:
    with sqlite3.connect(_state_file(project.root)) as connection:
        [(confidence,)] = connection.execute("SELECT confidence FROM evidence LIMIT 1").fetchall()
        connection.execute("UPDATE evidence SET confidence = ? WHERE rowid = (SELECT min(rowid) FROM evidence)",
                           (float.fromhex((confidence + 1e-9).hex()),))
    assert _reason(project) == "damaged: its rows are not the rows its build stamped"


def test_damage_the_counts_see_keeps_the_integrity_key_rather_than_a_refusal(project: Project) -> None:
    _edit(project.root, "UPDATE knowledge_items SET project_id = 'elsewhere' WHERE item_id = ?", ITEM)
    status = status_of(project, "internal")
    assert status["integrity"]["damageDetected"] is True and status["itemCount"] == 1


def test_the_index_is_not_built_from_a_planted_state(project: Project) -> None:
    _edit(project.root, EDIT_BODY)
    with pytest.raises(StateNotAsBuiltError, match="not the one `theurian migrate apply` built here"):
        build_index(project.root, "internal")


def test_the_state_is_verified_once_per_file_identity_and_again_when_the_file_changes(project: Project) -> None:
    stores = VerifiedStores()
    path = _state_file(project.root)
    pointer = read_pointer(project.root)
    assert pointer is not None
    count = pointer.migration_count
    identity = file_identity(path)
    later = max(identity[3], identity[4]) + SETTLED_NS  # when the file's times are settled
    with closing(open_read_only(project.root, pointer)) as connection:
        key = project_key(connection)
        assert verified_damage(stores, path, identity, connection, key, count, later) is False
    entry = f"{path}\0{key}\0{count}"
    assert stores.shelf(STORE_KIND).get(entry, identity, build_stamp_secret()) is False
    _edit(project.root, EDIT_BODY)
    with closing(open_read_only(project.root, pointer)) as connection:
        # The identity it was verified under: remembered, so the rows are not digested again.
        assert verified_damage(stores, path, identity, connection, key, count, later) is False
        changed = file_identity(path)
        assert changed != identity
        with pytest.raises(StateNotAsBuiltError):
            verified_damage(stores, path, changed, connection, key, count, time.time_ns() + SETTLED_NS)
        with pytest.raises(StateNotAsBuiltError):  # the refusal is remembered for that identity too
            verified_damage(stores, path, changed, connection, key, count, time.time_ns() + SETTLED_NS)
    # Another cache (another daemon) shares nothing with this one: there is no process-wide cache.
    assert VerifiedStores().shelf(STORE_KIND).get(entry, identity, build_stamp_secret()) is None


def test_a_state_copied_beside_itself_under_another_name_is_still_this_installations(project: Project) -> None:
    # The stamp names no path: a project folder moved or copied on this machine keeps its state.
    moved = project.root.parent / "moved"
    shutil.copytree(project.root, moved)
    assert status_of(Project("moved", moved), "internal")["itemCount"] == 2


def _planted_wal(state: Path, work: Path, sql: str) -> bytes:
    """A real write-ahead log for `state`: `sql` run on a byte-identical copy in WAL mode, its log taken while the
    writer is still open (closing the last connection would checkpoint it into the copy and delete it)."""
    copy = work / state.name
    shutil.copy(state, copy)
    with closing(sqlite3.connect(copy, isolation_level=None)) as writer:
        writer.execute("PRAGMA journal_mode = WAL")
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute(sql)
        return wal_path(copy, SQLITE_WAL_SUFFIX).read_bytes()


def test_a_real_write_ahead_log_beside_the_state_is_refused_before_sqlite_can_serve_its_rows(
        project: Project, tmp_path: Path) -> None:
    state = _state_file(project.root)
    identity = file_identity(state)
    work = tmp_path / "work"
    work.mkdir()
    wal_path(state, SQLITE_WAL_SUFFIX).write_bytes(_planted_wal(state, work, EDIT_BODY))
    assert file_identity(state) == identity  # the file a verify-once cache vouched for is untouched
    with closing(sqlite3.connect(f"{state.as_uri()}?mode=ro", uri=True)) as raw:  # what a reader would have read
        assert raw.execute("SELECT count(*) FROM revisions WHERE body = 'Planted.'").fetchone() == (1,)
    pointer = read_pointer(project.root)
    assert pointer is not None
    with pytest.raises(StateUnreadableError) as refused:
        open_read_only(project.root, pointer)
    assert refused.value.message == STATE_UNREADABLE
    with pytest.raises(StateUnreadableError):
        get_item(project, "internal", ITEM, ITEM)
