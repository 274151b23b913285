"""`theurian migrate apply | status` and `theurian index build` through the real console script."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

from knowledge.apply import REFUSED_STATE, REFUSED_STATE_CURE
from knowledge.state import POINTER_NAME
from tests.knowledge.authoring import MigrationWriter, copy_sample
from tests.support.installation import Installation
from theurian.cli.pasteable import with_project
from theurian.embedding import DEFAULT_MODEL_NAME

STATE = Path(".theurian/state")


def _state_files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / STATE).glob("*"))} if (root / STATE).exists() else {}


def test_apply_applies_pending_migrations_in_order_and_status_lists_them(installation: Installation,
                                                                          tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    before = installation.cli("migrate", "status", "--project", str(root), check=True).stdout.splitlines()
    assert [line.split("\t")[0] for line in before] == ["pending", "pending"]
    applied = installation.cli("migrate", "apply", "--project", str(root), check=True).stdout.splitlines()
    assert applied[0] == "applied 01K1A0000000000000000000M1-seed-knowledge.yaml"
    assert applied[1] == "applied 01K1B0000000000000000000M2-shorter-tokens.yaml"
    after = json.loads(installation.cli("migrate", "status", "--project", str(root), "--json",
                                        check=True).stdout)["summary"]
    assert [a["file"] for a in after["applied"]] == [line.split("\t")[1] for line in before]
    assert after["pending"] == [] and after["edited"] == []
    pointer = json.loads((root / STATE / POINTER_NAME).read_text(encoding="utf-8"))
    assert pointer["migrationCount"] == 2


def test_status_of_a_state_edited_with_sqlite3_says_it_is_refused_not_only_pending(installation: Installation,
                                                                                  tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    installation.cli_in_process("migrate", "apply", "--project", str(root))
    pointer = json.loads((root / STATE / POINTER_NAME).read_text(encoding="utf-8"))
    with contextlib.closing(sqlite3.connect(root / STATE / pointer["stateFile"])) as connection, connection:
        connection.execute("UPDATE revisions SET body = 'Planted.'")
    lines = installation.cli("migrate", "status", "--project", str(root), check=True).stdout.splitlines()
    assert lines[0] == with_project(f"refused\t{REFUSED_STATE}: every migration reads as pending; cure: "
                                    f"{REFUSED_STATE_CURE}", root)
    assert [line.split("\t")[0] for line in lines[1:]] == ["pending", "pending"]
    summary = json.loads(installation.cli("migrate", "status", "--project", str(root), "--json",
                                          check=True).stdout)["summary"]
    assert summary["refused"] is True and summary["applied"] == [] and len(summary["pending"]) == 2
    installation.cli("migrate", "apply", "--project", str(root), check=True)
    rebuilt = json.loads(installation.cli("migrate", "status", "--project", str(root), "--json",
                                          check=True).stdout)["summary"]
    assert rebuilt["refused"] is False and rebuilt["pending"] == []


def test_a_second_apply_with_nothing_pending_exits_zero_and_changes_nothing(installation: Installation,
                                                                           tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    installation.cli_in_process("migrate", "apply", "--project", str(root))
    files = _state_files(root)
    again = installation.cli("migrate", "apply", "--project", str(root))
    assert again.returncode == 0 and again.stdout.startswith("nothing pending")
    assert _state_files(root) == files


def test_an_edited_applied_migration_stops_the_apply_naming_the_file(installation: Installation,
                                                                    tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    installation.cli_in_process("migrate", "apply", "--project", str(root))
    files = _state_files(root)
    edited = root / ".theurian/migrations/01K1A0000000000000000000M1-seed-knowledge.yaml"
    edited.write_text(edited.read_text(encoding="utf-8").replace("platform-team", "someone-else", 1),
                      encoding="utf-8")
    pending = MigrationWriter(root, created_at="2026-09-01T00:00:00Z")
    pending.item("decision.new", "A new decision.")
    pending.write("new")  # a pending migration is not applied past an edited one
    result = installation.cli("migrate", "apply", "--project", str(root), "--json")
    assert result.returncode == 1
    assert "MIGRATION_CHECKSUM_MISMATCH" in result.stderr and edited.name in result.stderr
    assert "Traceback" not in result.stderr
    refusal = json.loads(result.stdout)
    assert refusal["command"] == "migrate apply" and refusal["ok"] is False
    envelope = refusal["summary"]
    assert envelope["error"] == result.stderr.strip().removeprefix("theurian: ") and envelope["exitCode"] == 1
    assert envelope["code"] == "MIGRATION_CHECKSUM_MISMATCH" and envelope["details"]["file"] == edited.name
    assert _state_files(root) == files
    status = installation.cli("migrate", "status", "--project", str(root), check=True).stdout
    assert f"EDITED since: MIGRATION_CHECKSUM_MISMATCH)\t{edited.name}" in status


def test_status_calls_an_applied_migration_that_is_gone_removed_not_edited(installation: Installation,
                                                                              tmp_path: Path) -> None:
    """As `migrate apply` words it ("was removed after it was applied"); status said EDITED."""
    root = copy_sample(tmp_path / "sample")
    installation.cli_in_process("migrate", "apply", "--project", str(root))
    removed = sorted((root / ".theurian/migrations").iterdir())[-1]
    removed.unlink()
    status = installation.cli("migrate", "status", "--project", str(root), check=True).stdout
    assert f"applied (REMOVED since: MIGRATION_CHECKSUM_MISMATCH)\t{removed.name}" in status.splitlines()
    assert "EDITED" not in status


def test_a_conflicting_revision_stops_the_apply_and_changes_nothing(installation: Installation,
                                                                   tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    installation.cli_in_process("migrate", "apply", "--project", str(root))
    files = _state_files(root)
    writer = MigrationWriter(root, created_at="2026-09-01T00:00:00Z")
    # The sample's second migration moved auth-policy past R1: a change still expecting R1 conflicts.
    writer.item("architecture.auth-policy", "Stale edit.", create=False, expected="01K1A0000000000000000000R1")
    path = writer.write("stale-edit")
    result = installation.cli("migrate", "apply", "--project", str(root), "--json")
    assert result.returncode == 1 and "REVISION_CONFLICT" in result.stderr and path.name in result.stderr
    details = json.loads(result.stdout)["summary"]["details"]
    assert details == {"itemId": "architecture.auth-policy", "expected": "01K1A0000000000000000000R1",
                       "actual": "01K1B0000000000000000000R5", "file": path.name, "operationIndex": 0}
    assert _state_files(root) == files


def test_an_invalid_migration_names_file_operation_and_problem_and_changes_nothing(
        installation: Installation, tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    installation.cli_in_process("migrate", "apply", "--project", str(root))
    files = _state_files(root)
    writer = MigrationWriter(root)
    writer.item("decision.fine", "Fine.")
    writer.op(op="addAlias", alias="nowhere", itemId="decision.missing")
    path = writer.write("bad-alias")
    result = installation.cli("migrate", "apply", "--project", str(root))
    assert result.returncode == 1
    assert result.stderr.strip() == (f"theurian: migration {path.name} is invalid at operation 2: item "
                                     "decision.missing does not exist; nothing was changed")
    assert _state_files(root) == files


def test_a_body_whose_hash_does_not_match_is_refused_before_anything_applies(installation: Installation,
                                                                            tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    body = root / ".theurian/knowledge/testing/flaky-retries.md"
    body.write_text(body.read_text(encoding="utf-8") + "tampered\n", encoding="utf-8")
    result = installation.cli("migrate", "apply", "--project", str(root))
    assert result.returncode == 1
    assert "01K1A0000000000000000000M1-seed-knowledge.yaml is invalid at operation 3" in result.stderr
    assert "hashes to sha256:" in result.stderr
    assert not (root / STATE / POINTER_NAME).exists()


def test_index_build_publishes_a_build_id_and_the_state_hash_it_was_built_from(installation: Installation,
                                                                              tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    state_hash = json.loads(installation.cli_in_process("migrate", "apply", "--project", str(root),
                                                        "--json").stdout)["summary"]["stateHash"]
    out = installation.cli("index", "build", "--project", str(root), check=True).stdout
    published = json.loads((root / STATE / "knowledge-index.json").read_text(encoding="utf-8"))
    assert out.strip() == (f"index {published['buildId']} built from state {state_hash} "
                           f"(channels: lexical, title, trigram, dense; embedding model: {DEFAULT_MODEL_NAME})")
    assert published["stateHash"] == state_hash and published["disclosureCeiling"] == "internal"
    assert published["channels"] == ["lexical", "title", "trigram", "dense"] and published["raptorSha256"] is None


def test_index_build_without_a_state_names_migrate_apply(installation: Installation, tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    installation.cli_in_process("init", str(root))
    result = installation.cli("index", "build", "--project", str(root))
    assert result.returncode == 1 and "theurian migrate apply" in result.stderr
