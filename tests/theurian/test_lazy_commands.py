"""theurian.cli.lazy_commands: a command's module is imported when the command line names it, with Ctrl-C held."""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest
import typer.main

from theurian.cli.main import COMMANDS, app
from theurian.errors import EXIT_INTERRUPTED

# Every module the commands bring in, and the stages behind them: none is needed to start.
_COMMAND_MODULES = ("theurian.cli.project_commands", "theurian.cli.review_commands", "theurian.cli.read_commands",
                    "theurian.cli.doctor_command", "theurian.cli.auth_commands", "theurian.cli.daemon_commands",
                    "evidence", "projection", "ingest", "knowledge", "serve")


def _loaded_after(script: str, *arguments: str) -> list[str]:
    probe = ("import json, sys\n" + script +
             f"\nprint(json.dumps(sorted(m for m in {_COMMAND_MODULES!r} if m in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe, *arguments], capture_output=True, text=True, check=True,
                          timeout=60)
    return list(orjson.loads(done.stdout.splitlines()[-1]))


def test_importing_the_command_line_imports_no_command_module() -> None:
    assert _loaded_after("import theurian.cli.main") == []


def test_a_command_imports_its_own_module_and_no_other_command_s() -> None:
    script = ("import theurian.cli.main as m\n"
              "m.app(['project', 'list', '--help'], standalone_mode=False)")
    assert [m for m in _loaded_after(script) if m.startswith("theurian.cli.")] == ["theurian.cli.project_commands"]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_loader_registers_the_command_it_is_listed_under(name: str) -> None:
    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]  # typer vendors click
    assert command.name == name


def test_help_lists_the_commands_in_the_table_s_order() -> None:
    assert list(typer.main.get_command(app).commands) == list(COMMANDS)  # type: ignore[attr-defined]


# A stand-in for a command's module that receives a Ctrl-C halfway through its import: the rest must still run (a
# native module left half-initialised crashed the process), and the command line must then exit 130 in silence.
_INTERRUPTED_IMPORT = """
import importlib.abc, importlib.util, os, signal, sys
import typer
import theurian.cli.main as main

class SlowCommands(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        return importlib.util.spec_from_loader(name, self) if name == "theurian.cli.project_commands" else None
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        os.kill(os.getpid(), signal.SIGINT)  # handled at the next bytecode, here, mid-import
        print("the import ran to its end", flush=True)
        module.app = typer.Typer()
        module.app.command("list")(lambda: print("the command ran", flush=True))
        module.app.command("other")(lambda: None)

sys.meta_path.insert(0, SlowCommands())
sys.argv = ["theurian", "project", "list"]
main.run()
"""


def test_a_ctrl_c_while_a_command_s_module_loads_lets_the_import_finish_then_exits_130_silently() -> None:
    done = subprocess.run([sys.executable, "-c", _INTERRUPTED_IMPORT], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (EXIT_INTERRUPTED, "the import ran to its end\n", "")
