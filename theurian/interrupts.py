"""Ctrl-C during a bulk job, where native code may swallow it.

Python runs its SIGINT handler in the main thread between bytecodes, and also inside a C extension that calls
back into Python; an extension that then clears the error it got back (jsonschema-rs validating a record was seen
to, about once in a few hundred Ctrl-Cs) drops the KeyboardInterrupt, and the job carries on to the end. So
`watching_interrupts()` installs a handler that notes every Ctrl-C as well as raising it, and the job calls
`check()` where it can stop cleanly: a swallowed Ctrl-C still stops it there.

`done()` marks the point past which stopping would undo nothing (the new store already swapped in): a Ctrl-C
after it is ignored, so a job that has happened is never reported as interrupted. `deferred()` notes a Ctrl-C
without raising it, for cleanup that must run to its end (waiting until a database
connection is free, so it can be closed). `interrupts_held()` does the same for a block that must not be
interrupted at all, and raises the Ctrl-C after it: importing DuckDB, whose native module aborts the whole
process (SIGABRT, a "Critical nanobind error" on stderr) when a KeyboardInterrupt lands while it registers its
types.

`terminated_as_interrupted()` makes SIGTERM (a service manager's stop, `timeout`, `kill`) stop a command exactly as
Ctrl-C does, through whatever SIGINT handler is in place (so a build's point of no return holds for it too), where
the default would kill the process mid-write and leave a build's temporary file behind. Where SIGINT is ignored (a
child the build forked; a command a shell started in the background), SIGTERM keeps its default: nothing else
would stop the process.

`ignored_from_here()` is for the process's very end, once a command has returned its outcome: a Ctrl-C while it
prints its last line or while the interpreter shuts down (about one in five pressed in a build's last second) would
otherwise make a command that has finished look interrupted, or end the process by SIGINT itself.

Only the main thread receives KeyboardInterrupt, and only Python's own handler is replaced: in another thread,
or where SIGINT is ignored or handled by someone else, nothing changes and `check()` never raises.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType


class Interrupts:
    """What a job has been told by Ctrl-C while it was watched."""

    def __init__(self) -> None:
        self.noted = False
        self._deferred = 0
        self._done = False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self._done:
            return
        self.noted = True
        if not self._deferred:
            raise KeyboardInterrupt

    def check(self) -> None:
        """Raise KeyboardInterrupt if a Ctrl-C came while watched, even one something swallowed."""
        if self.noted:
            raise KeyboardInterrupt

    def done(self) -> None:
        """The job has reached the point where stopping it would undo nothing (a store already swapped in): from
        here until the watch ends, a Ctrl-C is ignored, and one noted but not yet raised is forgotten."""
        self._done = True
        self.noted = False

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Inside, a Ctrl-C is noted and not raised."""
        self._deferred += 1
        try:
            yield
        finally:
            self._deferred -= 1


@contextlib.contextmanager
def watching_interrupts() -> Iterator[Interrupts]:
    """An `Interrupts` whose handler takes SIGINT for the duration, where this process's main thread runs Python's
    default handler; the previous handler is restored after."""
    interrupts = Interrupts()
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield interrupts
        return
    signal.signal(signal.SIGINT, interrupts.handle)
    try:
        yield interrupts
    finally:
        # A Ctrl-C landing at the start of this block must not skip the restore: from the first statement on, one
        # is only noted, and the restore runs even if that first statement was where it landed.
        try:
            interrupts._deferred += 1
        finally:
            signal.signal(signal.SIGINT, signal.default_int_handler)


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Run the block to its end whatever Ctrl-C does meanwhile; a Ctrl-C pressed inside is raised after it."""
    with watching_interrupts() as interrupts, interrupts.deferred():
        yield
    interrupts.check()


def import_duckdb_held() -> None:
    """Import DuckDB whole with Ctrl-C held (see the module's note): every command that loads a module using
    DuckDB calls this first, so the one import that can abort the process is never interrupted."""
    with interrupts_held():
        import duckdb  # noqa: F401 - imported for its side effect: loaded before anything can interrupt it


def ignored_from_here() -> None:
    """Ignore Ctrl-C (and a SIGTERM taken as one) for the rest of this process (see the module's note), where its
    main thread runs Python's default handler; elsewhere nothing changes. For the console script's exit alone: a
    process that goes on to work must stay interruptible."""
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if signal.getsignal(signal.SIGTERM) is _as_ctrl_c:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)


_terminations: list[int] = []  # one entry a SIGTERM taken as Ctrl-C


def terminated_as_interrupted() -> None:
    """From here on, SIGTERM stops this process as Ctrl-C does (see the module's note), where its main thread
    runs and SIGTERM has its default action; elsewhere nothing changes."""
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL):
        signal.signal(signal.SIGTERM, _as_ctrl_c)


def was_terminated() -> bool:
    """Whether a SIGTERM was taken as Ctrl-C in this process (its exit code is then EXIT_TERMINATED)."""
    return bool(_terminations)


def _as_ctrl_c(signum: int, frame: FrameType | None) -> None:
    handler = signal.getsignal(signal.SIGINT)
    if not callable(handler):  # SIGINT ignored (or not Python's): nothing would stop the process but the default
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        return
    _terminations.append(signum)
    handler(signal.SIGINT, frame)
