"""The console script's entry imports nothing before its Ctrl-C handler, so an interrupt while the command line
loads exits 130 rather than printing a traceback from inside an import."""

from __future__ import annotations

import subprocess
import sys

import orjson

from theurian.cli import entry
from theurian.errors import EXIT_INTERRUPTED


def test_importing_the_entry_point_imports_nothing_but_itself_and_its_packages() -> None:
    script = ("import sys; before = set(sys.modules); import theurian.cli.entry; "
              "added = sorted(set(sys.modules) - before); import json; print(json.dumps(added))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)
    assert orjson.loads(done.stdout) == ["theurian", "theurian.cli", "theurian.cli.entry"]


def test_the_entry_point_exits_as_every_interrupt_does() -> None:
    assert entry._EXIT_INTERRUPTED == EXIT_INTERRUPTED
