"""A sample project with every store built by the real CLI's commands (run in-process): knowledge applied and
indexed, findings from a git history, the bundled evidence lake projected. Tests that want served answers rather
than "not built" start here."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.support.installation import Installation

REPO = Path(__file__).resolve().parents[2]
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "Sample", "GIT_AUTHOR_EMAIL": "sample@example.invalid",
                "GIT_COMMITTER_NAME": "Sample", "GIT_COMMITTER_EMAIL": "sample@example.invalid",
                "GIT_AUTHOR_DATE": "2026-10-01T09:00:00Z", "GIT_COMMITTER_DATE": "2026-10-01T09:00:00Z"}


def built_sample_project(installation: Installation, root: Path, project_id: str = "sample") -> Path:
    shutil.copytree(REPO / "fixtures/sample-project", root)
    for part in ("migrations", "knowledge"):
        shutil.copytree(REPO / "fixtures/knowledge/sample/.theurian" / part, root / ".theurian" / part)
    shutil.copytree(REPO / "fixtures/evidence", root / ".theurian/review")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_IDENTITY
    for args in (["init", "--quiet", "--initial-branch=main"], ["add", "-A"],
                 ["commit", "--quiet", "-m", "Sample", "-m",
                  "Review-Finding: security HIGH — tokens are compared with == instead of a constant-time check"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    # The real commands, run in-process (`Installation.cli_in_process`): the tests that start here examine what
    # the daemon serves from these stores, not the commands, whose console-script runs have tests of their own.
    installation.cli_in_process("project", "register", str(root), "--id", project_id)
    for command in (("migrate", "apply"), ("index", "build"), ("findings", "build"), ("review", "build")):
        installation.cli_in_process(*command, "--project", str(root))
    return root


def registered_empty_project(root: Path, project_id: str) -> Path:
    """A fresh folder made a project (`init_project`) and registered as `project_id` in this test's installation,
    with nothing ingested or built."""
    from theurian import registry
    from theurian.project import init_project

    root.mkdir(parents=True)
    init_project(root)
    registry.register(root, project_id)
    return root
