"""`Installation.cli_in_process`, the setup runner: the command sees the installation it is asked for, not the
test's own, and the test's process is left as it found it (environment and folder)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.installation import Installation
from theurian import registry


def test_a_setup_step_registers_in_its_own_installation_and_restores_the_environment_and_folder(
        installation: Installation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = Installation(tmp_path / "other-installation")
    monkeypatch.setenv("GITHUB_TOKEN", "a-token")  # the step runs without it (as `cli` does); it is put back
    monkeypatch.chdir(tmp_path)
    environment = dict(os.environ)
    root = tmp_path / "p"
    root.mkdir()
    other.cli_in_process("init", str(root))
    registered = other.cli_in_process("project", "register", str(root), "--id", "elsewhere", cwd=root)
    assert registered.returncode == 0 and "elsewhere" in registered.stdout
    assert dict(os.environ) == environment and Path.cwd() == tmp_path
    assert registry.read().find("elsewhere") is None  # the test's own installation saw nothing
    with other.in_process():
        found = registry.read().find("elsewhere")
    assert found is not None and found.root == root.resolve()
    listed = other.cli("project", "list", check=True).stdout  # and the console script reads what it wrote
    assert "elsewhere" in listed


def test_a_setup_step_that_fails_fails_the_test_naming_the_command_and_its_words(
        installation: Installation, tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match=r"theurian project register .* \(in-process\) exited 1"):
        installation.cli_in_process("project", "register", str(tmp_path / "absent"))
