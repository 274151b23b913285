"""Share CPU-bound work between this process and forked children: `map_shares(work, shares)`.

The first share is worked here and every other in a child forked for it, which inherits this process's memory
(modules, caches, the arguments) rather than pickling or importing them, so a child starts in milliseconds;
only its result crosses back, pickled into an in-memory file (`memfd`) the parent reads once the child has
exited. A pipe was measured first: 106 MB of rows took 1.8 s through one, against 0.5 s to pickle and unpickle
them, as every 64 KB waited for the other side.

Forking is safe only while this process runs one thread: a lock some other thread held at the fork stays held
forever in the child. So a process running more than one thread (a daemon, a test runner's worker), or a
platform without a plain `fork`, works every share itself, in order — the same results, one core.

A child that cannot be started (no process slot, no memory, no in-memory file) or that fails in any way (an
exception, a signal, a result that cannot be read back) says nothing; its share is then worked here, where an
exception surfaces as it would have in a one-process run, and no further child is started. No child outlives
the call.

Ctrl-C: a child is born ignoring SIGINT (the parent stops every child when it is interrupted), and SIGINT is
blocked across each fork, so one pressed at that moment is delivered to the parent just after, never lost, and
never before the child is on the list the parent stops.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, BinaryIO, Final, Generic, NamedTuple, NoReturn, TypeVar, cast

Share = TypeVar("Share")
Result = TypeVar("Result")


def usable_cpus() -> int:
    """How many CPUs this process may run on (its affinity, where the platform says)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def fork_is_safe() -> bool:
    """Whether this process may fork: Linux, and exactly one thread (counted by the kernel, so threads that
    native libraries started count too)."""
    if not sys.platform.startswith("linux") or threading.active_count() != 1:
        return False
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Threads:"):
                    return int(line.split()[1]) == 1
    except (OSError, ValueError):
        return False
    return False


class Shared(NamedTuple, Generic[Result]):
    results: list[Result]  # in the order of the shares
    processes: int  # how many processes worked a share: this one and each child whose result was used


def map_shares(work: Callable[[Share], Result], shares: Sequence[Share]) -> Shared[Result]:
    """`[work(share) for share in shares]`, the shares after the first worked in forked children when that is
    safe. Results come back in the order of `shares`."""
    if len(shares) <= 1 or not fork_is_safe():
        return Shared([work(share) for share in shares], 1)
    children: list[_Child] = []
    try:
        for share in shares[1:]:
            if not _start(work, share, children):
                break  # the system would not give one: the rest are worked here
        results = [work(shares[0])]
        for index, share in enumerate(shares[1:]):
            result = children[index].result() if index < len(children) else _FAILED
            results.append(work(share) if result is _FAILED else cast(Result, result))
        return Shared(results, 1 + sum(child.succeeded for child in children))
    finally:
        for child in children:
            child.stop()


_FAILED: Final = object()


class _Child:
    """A forked child working one share, and the in-memory file it leaves its pickled result in."""

    def __init__(self, pid: int, spool: BinaryIO) -> None:
        self.pid, self.spool = pid, spool
        self.reaped = False
        self.succeeded = False

    def result(self) -> Any:
        """The child's result once it has exited, or _FAILED."""
        _, status = os.waitpid(self.pid, 0)
        self.reaped = True
        if os.waitstatus_to_exitcode(status) != 0:
            return _FAILED
        try:
            self.spool.seek(0)
            result = pickle.loads(self.spool.read())  # noqa: S301 - written by our own forked child, no one else
        except Exception:  # noqa: BLE001 - a result that cannot be read back: the share is worked here
            return _FAILED
        self.succeeded = True
        return result

    def stop(self) -> None:
        self.spool.close()
        if not self.reaped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.reaped = True


def _start(work: Callable[[Share], Result], share: Share, children: list[_Child]) -> bool:
    """Fork a child working `share` and put it on `children`; False when the system would not give one."""
    try:
        spool = _spool()
    except OSError:
        return False
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        try:
            pid = os.fork()
        except OSError:
            spool.close()
            return False
        if pid == 0:
            _child(work, share, spool, blocked)  # never returns
        children.append(_Child(pid, spool))
        return True
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)  # a Ctrl-C pressed meanwhile is delivered now


def _spool() -> BinaryIO:
    """An unnamed file for one child's result: in memory where the kernel offers it, else a temp file."""
    if hasattr(os, "memfd_create"):
        return os.fdopen(os.memfd_create("theurian-share", os.MFD_CLOEXEC), "w+b")
    return tempfile.TemporaryFile()


def _child(work: Callable[[Share], Result], share: Share, spool: BinaryIO, mask: Iterable[int]) -> NoReturn:
    """The forked child: work the share, pickle the result into `spool`, and leave without running anything of
    the parent's (no atexit handlers, no buffered output flushed twice)."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        pickle.dump(work(share), spool, protocol=pickle.HIGHEST_PROTOCOL)
        spool.flush()
    except BaseException:  # noqa: BLE001 - the parent redoes the share and reports whatever it raises
        os._exit(1)
    os._exit(0)
