"""The `theurian` console script's entry point.

It imports nothing at module level but `sys` and `_signal`, both built into the interpreter and loaded before
any script runs (`signal`, the module around `_signal`, would import `enum` and more), so the script's own import
finishes almost at once. The command line's imports (typer, the commands, and the native modules they load: orjson,
jsonschema-rs, rpds) then run with Ctrl-C held: one pressed meanwhile is noted, and exits with 130 once the
imports are done. Raising it inside an import is not safe: a KeyboardInterrupt landing in a native module's
initialisation crashed the process (SIGSEGV in orjson's), and one landing in a class body came back wrapped in
a RuntimeError (`__set_name__`), which no `except KeyboardInterrupt` catches.

What no entry point can cover is the interpreter's own start, before this module runs (`site`, the `.pth`
files, about the first 30 ms): a Ctrl-C there is Python's, and Python prints its traceback.
"""

import _signal as signal  # the built-in module itself: see the module's note
import sys

# theurian.errors.EXIT_INTERRUPTED, repeated here because importing it is what may be interrupted.
_EXIT_INTERRUPTED = 130


def run() -> None:
    pressed = []

    def note(signum: int, frame: object) -> None:
        pressed.append(signum)

    try:
        held = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        if held:
            signal.signal(signal.SIGINT, note)
        try:
            from theurian.cli.main import run as run_command_line
        finally:
            if held:
                signal.signal(signal.SIGINT, signal.default_int_handler)
        if pressed:
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        sys.exit(_EXIT_INTERRUPTED)
    run_command_line()
