"""`migrate status` of a state whose counts detect damage (knowledge/apply.py MigrationStatus.refused): refused like a
state this installation did not build, so its untrusted history is not listed as applied and every migration reads
as pending, as its refusal line says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowledge.state import POINTER_NAME
from tests.knowledge.authoring import copy_sample
from tests.support.installation import Installation

STATE = Path(".theurian/state")


@pytest.fixture
def damaged(installation: Installation, tmp_path: Path) -> Path:
    """A project whose applied state's pointer records one migration fewer than its history holds."""
    root = copy_sample(tmp_path / "sample")
    installation.cli_in_process("migrate", "apply", "--project", str(root))
    pointer_file = root / STATE / POINTER_NAME
    pointer = json.loads(pointer_file.read_text(encoding="utf-8"))
    pointer["migrationCount"] -= 1  # the history now disagrees with its record: damage detected
    pointer_file.write_text(json.dumps(pointer), encoding="utf-8")
    return root


def test_status_of_a_state_whose_counts_detect_damage_reads_every_migration_as_pending_as_it_says(
        installation: Installation, damaged: Path) -> None:
    summary = json.loads(installation.cli("migrate", "status", "--project", str(damaged), "--json",
                                          check=True).stdout)["summary"]
    assert summary["refused"] is True
    assert summary["applied"] == [] and len(summary["pending"]) == 2


def test_status_text_of_a_state_whose_counts_detect_damage_lists_no_migration_as_applied(
        installation: Installation, damaged: Path) -> None:
    lines = installation.cli("migrate", "status", "--project", str(damaged), check=True).stdout.splitlines()
    assert lines[0].startswith("refused\t") and "every migration reads as pending" in lines[0]
    assert [line.split("\t")[0] for line in lines[1:]] == ["pending", "pending"]
