"""The `theurian` console script's entry point.

It imports nothing at module level, so the script's own import finishes almost at once. The command line's
imports (typer, the commands) then run inside a handler: a Ctrl-C pressed while they load exits with 130 like any
other interrupt, instead of printing a traceback from inside an import.
"""

import sys

# theurian.errors.EXIT_INTERRUPTED, repeated here because importing it is what may be interrupted.
_EXIT_INTERRUPTED = 130


def run() -> None:
    try:
        from theurian.cli.main import run as run_command_line
    except KeyboardInterrupt:
        sys.exit(_EXIT_INTERRUPTED)
    run_command_line()
