"""The build's read phase in several processes: the embedding model and what the replaced store lends (its
vectors, its kept clustering) are loaded by the parent alone, once, after its readers are forked (loading them
starts threads, after which nothing forks), so the lake is still read by every process asked for and every
unchanged vector is still reused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.projection.review_records import pull_request, thread, write_lake
from tests.support.installation import Installation

_PROBE = """
import os, sys
from pathlib import Path
import projection.review_build as review_build
real = review_build.previous_store
def recorded(*arguments):
    with open(sys.argv[2], "a", encoding="utf-8") as calls:
        calls.write(f"{os.getpid()}\\n")
    return real(*arguments)
review_build.previous_store = recorded
summary = review_build.build_review_store(Path(sys.argv[1]), processes=2, full=True)
print(os.getpid(), summary.processes, summary.reused, summary.embedded)
"""


def test_the_parent_alone_loads_the_previous_vectors_once_while_both_processes_read(
        installation: Installation, tmp_path: Path) -> None:
    root = installation.new_project_in_process(tmp_path / "p")
    write_lake(root, [thread("Acme/Alpha", number, f"PRRT_{number}", bodies=(f"the cache lock {number}",))
                      for number in range(1, 7)] + [pull_request("Acme/Alpha", 9, "PR_9", body="retry it")])
    installation.cli_in_process("review", "build", "--project", str(root))  # the store whose vectors are reused
    calls = tmp_path / "calls.txt"
    probe = subprocess.run([sys.executable, "-c", _PROBE, str(root), str(calls)], env=installation.env,
                           capture_output=True, text=True, timeout=120, encoding="utf-8", check=False)
    assert probe.returncode == 0, probe.stderr
    parent, processes, reused, embedded = probe.stdout.split()
    assert (processes, embedded) == ("2", "0") and int(reused) > 0
    assert calls.read_text(encoding="utf-8").split() == [parent]
