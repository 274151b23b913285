"""SIGTERM (a service manager's stop, `timeout`, `kill`) stops `theurian review build` as Ctrl-C does: the store it
replaces keeps serving, nothing of the stopped build is left in the state folder, and the exit code is 143 — where
the default action had killed the process mid-write and left its temporary store behind."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from evidence.lake import Lake
from projection.review_store import store_path
from tests.projection.review_records import pull_request, thread
from tests.support.installation import THEURIAN_BIN, Installation
from theurian.errors import EXIT_TERMINATED

_RECORDS = 3_000  # enough that the store's write phase lasts well past the moment its building file appears
_WAIT_SECONDS = 120.0


def _lake(root: Path) -> None:
    lake = Lake(root)
    for index in range(_RECORDS):
        words = " ".join(f"word{(index * 7 + k) % 500}" for k in range(40))
        if index % 2:
            lake.put(thread("Acme/Alpha", index // 2 + 1, f"PRRT_t{index}", bodies=(words, words[::-1])))
        else:
            lake.put(pull_request("Acme/Alpha", index // 2 + 1, f"PR_t{index}", body=words))


def _building(state: Path) -> list[Path]:
    return [path for path in state.iterdir() if ".building" in path.name]


def test_sigterm_during_a_build_keeps_the_old_store_leaves_nothing_behind_and_exits_143(
        installation: Installation, tmp_path: Path) -> None:
    root = installation.new_project_in_process(tmp_path / "p")
    installation.cli_in_process("review", "build", "--project", str(root))  # the empty lake's store
    old = store_path(root).stat().st_ino
    _lake(root)
    state = store_path(root).parent
    process = subprocess.Popen([str(THEURIAN_BIN), "review", "build", "--full", "--project", str(root)],
                               env=installation.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + _WAIT_SECONDS
    while not _building(state) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)  # bounded by the deadline: waiting for the build to start writing its new store
    assert _building(state), "the build never began writing its store"
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=_WAIT_SECONDS)
    assert (process.returncode, out, err) == (EXIT_TERMINATED, "", "")
    assert store_path(root).stat().st_ino == old  # the store it would have replaced is still the one served
    assert _building(state) == []
