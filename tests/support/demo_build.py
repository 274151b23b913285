"""`make demo`'s script (`scripts/demo.sh`, with its daemon stopped once the first client has its answers), run
once per test session however many pytest-xdist workers there are, for the tests that only read what it built.

The demo takes the best part of a minute on a loaded machine; tests/e2e/test_demo.py checks its output and
tests/e2e/test_doctor.py copies its folder to break, and both asked for exactly the same run. The first worker
to ask runs it under an exclusive lock in the session's shared temporary folder; any other waits on the lock,
then reads what the first left (the folder and the script's exit code and output). A test that writes copies
the folder first.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.daemon import free_port

REPO = Path(__file__).resolve().parents[2]
DEMO_TIMEOUT_SECONDS = 300


@dataclass(frozen=True)
class DemoRun:
    """What one `scripts/demo.sh` run left: its folder (installation and sample project), exit code and output."""

    folder: Path
    returncode: int
    output: str


def run_demo(folder: Path, port: int) -> subprocess.CompletedProcess[str]:
    """`scripts/demo.sh` into `folder` on `port`, stopping after the first client's answers, in an environment
    holding no GitHub credential, no THEURIAN_ setting of the caller's and not the caller's home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_", "THEURIAN_"))}
    # A home of its own beside the folder (which the demo replaces whole): a step that wrote to `~` would
    # otherwise write to the real one.
    home = folder.parent / f"{folder.name}-home"
    home.mkdir(parents=True, exist_ok=True)
    env |= {"THEURIAN_DEMO_DIR": str(folder), "THEURIAN_DEMO_PORT": str(port), "THEURIAN_DEMO_NO_SERVE": "1",
            "HOME": str(home)}
    return subprocess.run(["bash", "scripts/demo.sh"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=DEMO_TIMEOUT_SECONDS)


def shared_demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The session's one demo run (made now if no worker has made it yet). Never write into its folder."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if "PYTEST_XDIST_WORKER" in os.environ else base  # every worker's basetemp's parent
    record = shared / "shared-demo.json"
    with open(shared / "shared-demo.lock", "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or when the process dies
        if not record.exists():
            folder = shared / "shared-demo" / "demo"
            result = run_demo(folder, free_port())
            document = {"folder": str(folder), "returncode": result.returncode,
                        "output": result.stdout + result.stderr}
            (shared / "shared-demo.json.tmp").write_text(json.dumps(document), encoding="utf-8")
            os.replace(shared / "shared-demo.json.tmp", record)  # a worker killed mid-write leaves no half record
    document = json.loads(record.read_text(encoding="utf-8"))
    return DemoRun(Path(document["folder"]), document["returncode"], document["output"])
