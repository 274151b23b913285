"""`apply_migrations` in-process: the state it builds, its hash, and the refusals that leave state untouched."""

from __future__ import annotations

import contextlib
import copy
import os
import shutil
from pathlib import Path

import pytest

from knowledge.apply import apply_migrations, migration_status
from knowledge.builds import sweep
from knowledge.errors import MigrationInvalidError
from knowledge.state import STATE_FILE, open_read_only
from knowledge.state_stamp import state_digest
from tests.knowledge.authoring import MigrationWriter, copy_sample

STATE = Path(".theurian/state")


def _listing(root: Path) -> list[str]:
    return sorted(p.name for p in (root / STATE).iterdir()) if (root / STATE).exists() else []


def test_the_same_migrations_give_the_same_state_hash_wherever_they_are_applied(tmp_path: Path) -> None:
    first = apply_migrations(copy_sample(tmp_path / "one")).pointer
    second = apply_migrations(copy_sample(tmp_path / "Another_Folder")).pointer
    assert first.state_hash == second.state_hash and first.state_file != second.state_file


# Computed by the build before its state hash and stamp digest shared one read of each table (and before its
# PRAGMAs): a change to how either is computed must leave both bytes as they were, or every state already built
# reads as another (the pointer's hash) or as not as built (the stamp).
SAMPLE_STATE_HASH = "3be687353816890dfa71f66e128a3290c77213d904ce9976802701f7a88e4959"
SAMPLE_ROW_DIGEST = (18, "4ae5e6423dbdb57ba153628774aa27bce882b05fd2f6da4d51e3a63bb4ae5fc0")


def test_the_sample_builds_the_state_hash_and_row_digest_it_always_has(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    pointer = apply_migrations(root).pointer
    with contextlib.closing(open_read_only(root, pointer)) as connection:
        assert (pointer.state_hash, state_digest(connection)) == (SAMPLE_STATE_HASH, SAMPLE_ROW_DIGEST)


def test_a_rebuild_after_deleting_the_state_gives_the_same_hash(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    before = apply_migrations(root).pointer.state_hash
    shutil.rmtree(root / STATE)
    assert apply_migrations(root).pointer.state_hash == before


def test_a_new_migration_builds_a_new_database_and_removes_the_old_name(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    old = apply_migrations(root).pointer
    writer = MigrationWriter(root, created_at="2026-09-01T00:00:00Z")
    writer.item("decision.new", "New.")
    writer.write("new")
    new = apply_migrations(root)
    assert new.applied_now == [writer.write("new").name] and new.pointer.migration_count == 3
    assert new.pointer.state_hash != old.state_hash
    assert _listing(root) == sorted(["knowledge-active.json", new.pointer.state_file])


@pytest.mark.parametrize(("build", "where", "problem"), [
    (lambda w: w.op(op="createItem", itemId="x.lonely", kind="api", namespace="n", owner="o"), 0,
     "item x.lonely is created but no migration gives it a revision (upsertRevision)"),
    (lambda w: (w.item("x.a", "A."), w.op(op="addAlias", alias="x.a", itemId="x.a"),
                w.op(op="addAlias", alias="x.a", itemId="x.a")), 3, "alias x.a is already taken"),
    (lambda w: (w.item("x.a", "A."), w.op(op="createItem", itemId="x.a", kind="api", namespace="n", owner="o")),
     2, "item x.a already exists"),
    (lambda w: (w.item("x.a", "A."), w.item("x.b", "B."),
                w.op(**copy.deepcopy({**w.operations[1], "itemId": "x.b"}))), 4, "revision {revision} already exists"),
    (lambda w: (w.item("x.a", "A."), w.op(op="removeEvidence", itemId="x.a", sourceUri="u")), 2,
     "item x.a has no evidence from u"),
    (lambda w: (w.item("x.a", "A."), w.op(op="restoreItem", itemId="x.a")), 2,
     "item x.a is approved, not retired"),
    (lambda w: (w.item("x.a", "A."), w.op(op="supersedeSpecification", specId="s1", supersededBy="s2")), 2,
     "specification s1 is not registered"),
])
def test_an_operation_that_cannot_apply_names_its_index_and_changes_nothing(tmp_path: Path, build: object,
                                                                           where: int, problem: str) -> None:
    root = copy_sample(tmp_path / "sample")
    apply_migrations(root)
    before = {p: (root / STATE / p).read_bytes() for p in _listing(root)}
    writer = MigrationWriter(root, created_at="2026-09-01T00:00:00Z")
    build(writer)  # type: ignore[operator]
    path = writer.write("broken")
    with pytest.raises(MigrationInvalidError) as caught:
        apply_migrations(root)
    assert (caught.value.file_name, caught.value.operation_index) == (path.name, where)
    # A problem naming the first revision written (its id is made as the test runs).
    assert caught.value.problem == (problem.format(revision=writer.operations[1]["revisionId"]) if "{" in problem
                                    else problem)
    assert {p: (root / STATE / p).read_bytes() for p in _listing(root)} == before


def test_a_dependency_that_does_not_apply_earlier_is_refused(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    writer = MigrationWriter(root, depends_on=["01K9ZZZZZZZZZZZZZZZZZZZZZZ"])
    writer.item("x.a", "A.")
    path = writer.write("orphan")
    with pytest.raises(MigrationInvalidError) as caught:
        apply_migrations(root)
    assert caught.value.file_name == path.name and "dependsOn" in caught.value.problem
    assert _listing(root) == []


def test_a_file_whose_name_and_id_disagree_or_is_not_yaml_is_refused(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    folder = root / ".theurian/migrations"
    (folder / "01K9AAAAAAAAAAAAAAAAAAAAAA-mismatch.yaml").write_text(
        (folder / "01K1B0000000000000000000M2-shorter-tokens.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(MigrationInvalidError, match="the document's id is 01K1B0000000000000000000M2"):
        apply_migrations(root)
    (folder / "01K9AAAAAAAAAAAAAAAAAAAAAA-mismatch.yaml").write_text("operations: [unclosed", encoding="utf-8")
    with pytest.raises(MigrationInvalidError, match="not readable as UTF-8 YAML"):
        apply_migrations(root)
    (folder / "01K9AAAAAAAAAAAAAAAAAAAAAA-mismatch.yaml").rename(folder / "notes.yaml")
    with pytest.raises(MigrationInvalidError, match=r"notes.yaml is invalid at the document: the file name"):
        apply_migrations(root)


def test_a_body_outside_the_knowledge_folder_through_a_symlink_is_refused(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret", encoding="utf-8")
    (root / ".theurian/knowledge/linked").symlink_to(outside)
    writer = MigrationWriter(root)
    writer.item("x.a", "A.")
    writer.operations[-1]["contentFile"] = "../knowledge/linked/secret.md"
    writer.write("escape")
    with pytest.raises(MigrationInvalidError, match="does not stay under .theurian/knowledge/"):
        apply_migrations(root)



@pytest.mark.parametrize(("link", "target", "content_file"), [
    ("link.md", "../../secret.txt", "../knowledge/link.md"),
    ("d", "../../src", "../knowledge/d/secret.txt"),
])
def test_a_body_reached_through_a_symlink_to_elsewhere_in_the_project_is_refused(
        tmp_path: Path, link: str, target: str, content_file: str) -> None:
    # Inside the project is not inside .theurian/knowledge: a body is only ever read from the knowledge folder.
    root = copy_sample(tmp_path / "sample")
    (root / "secret.txt").write_text("project secret", encoding="utf-8")
    (root / "src").mkdir()
    (root / "src" / "secret.txt").write_text("project secret", encoding="utf-8")
    (root / ".theurian/knowledge" / link).symlink_to(target)
    writer = MigrationWriter(root)
    writer.item("x.a", "project secret")
    writer.operations[-1]["contentFile"] = content_file
    writer.write("escape")
    with pytest.raises(MigrationInvalidError, match="does not stay under .theurian/knowledge/"):
        apply_migrations(root)

def test_status_lists_applied_in_order_and_pending(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    apply_migrations(root)
    writer = MigrationWriter(root, created_at="2026-09-01T00:00:00Z")
    writer.item("x.a", "A.")
    path = writer.write("later")
    report = migration_status(root)
    assert [a.migration_id for a in report.applied] == ["01K1A0000000000000000000M1", "01K1B0000000000000000000M2"]
    assert report.pending == [path.name] and report.edited == []


def test_two_migration_files_with_one_id_are_refused_naming_both_before_anything_builds(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    writer = MigrationWriter(root)
    writer.item("x.a", "A.")
    first = writer.write("first")
    twin = MigrationWriter(root, migration_id=writer.migration_id)
    twin.item("x.b", "B.")
    second = twin.write("second")
    with pytest.raises(MigrationInvalidError) as refused:
        apply_migrations(root)
    assert first.name in refused.value.message and second.name in refused.value.message
    assert f"share the id {writer.migration_id}" in refused.value.message
    assert _listing(root) == []


def test_the_sweep_removes_what_a_killed_apply_left_with_its_companions_but_never_the_current_ones(
        tmp_path: Path) -> None:
    # A SIGKILLed build leaves its database and SQLite's -journal (and -wal/-shm); no pointer names them.
    root = copy_sample(tmp_path / "sample")
    apply_migrations(root)
    killed = "knowledge-state-01K9000000000000000000DEAD"
    for leftover in (".sqlite", ".sqlite-journal", ".sqlite-wal", ".sqlite-shm"):
        (root / STATE / f"{killed}{leftover}").write_bytes(b"half")
    (root / STATE / "knowledge-state-01K9000000000000000000G0NE.sqlite-journal").write_bytes(b"orphan")
    writer = MigrationWriter(root, created_at="2026-09-01T00:00:00Z")
    writer.item("decision.new", "New.")
    writer.write("new")
    current = apply_migrations(root).pointer.state_file
    assert _listing(root) == sorted(["knowledge-active.json", current])
    (root / STATE / f"{current}-journal").write_bytes(b"the current build's")
    (root / STATE / f"{killed}.sqlite-wal").write_bytes(b"half")
    sweep(root / STATE, STATE_FILE, "knowledge-state-", (current,))
    assert _listing(root) == sorted(["knowledge-active.json", current, f"{current}-journal"])


def test_the_built_state_is_fsynced_before_the_pointer_names_it(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite writes a build without syncing (`knowledge.state.create_database`): the one fsync of the finished
    file must come before the pointer's replace, or a crash could leave a pointer naming a torn file."""
    root = copy_sample(tmp_path / "sample").resolve()
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(source: str, target: str) -> None:
        events.append(("replace", str(target)))
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    pointer = apply_migrations(root).pointer
    built = ("fsync", str(root / STATE / pointer.state_file))
    assert built in events
    assert events.index(built) < events.index(("replace", str(root / STATE / "knowledge-active.json")))
