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


# A stand-in for the command line's imports that receives a Ctrl-C halfway through: the rest must still run (a
# native module left half-initialised crashed the process), and the script must then exit 130 in silence.
_INTERRUPTED_IMPORT = """
import importlib.abc, importlib.util, os, signal, sys
from theurian.cli import entry

class SlowMain(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        return importlib.util.spec_from_loader(name, self) if name == "theurian.cli.main" else None
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        os.kill(os.getpid(), signal.SIGINT)  # handled at the next bytecode, here, mid-import
        print("the import ran to its end", flush=True)
        module.run = lambda: print("the command ran", flush=True)

sys.meta_path.insert(0, SlowMain())
entry.run()
"""


def test_a_ctrl_c_while_the_command_line_loads_lets_the_imports_finish_then_exits_130_silently() -> None:
    done = subprocess.run([sys.executable, "-c", _INTERRUPTED_IMPORT], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (EXIT_INTERRUPTED, "the import ran to its end\n", "")


# A stand-in command that has finished (it returns 0) and whose process is sent a Ctrl-C while it shuts down: the
# exit must still be the command's own, in silence (a Ctrl-C in a build's last moments had ended the process by
# SIGINT with its summary already printed, so a finished build looked interrupted).
_CTRL_C_AT_EXIT = """
import atexit, os, signal, sys
import theurian.cli.main as main

def late_ctrl_c():
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(10_000):  # bytecodes, where Python would raise the KeyboardInterrupt
        pass
    print("the exit ran to its end", flush=True)

def finished_command(standalone_mode):
    atexit.register(late_ctrl_c)
    print("summary", flush=True)
    return 0

main.app = finished_command
main.run()
"""


def test_a_ctrl_c_after_the_command_has_finished_leaves_its_exit_code_and_prints_nothing() -> None:
    done = subprocess.run([sys.executable, "-c", _CTRL_C_AT_EXIT], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "summary\nthe exit ran to its end\n", "")
