"""Share CPU-bound work between this process and forked children: `map_shares(work, shares)`.

The first share is worked here and every other in a child forked for it, which inherits this process's memory
(modules, caches, the arguments) rather than pickling or importing them, so a child starts in milliseconds;
only its result crosses back, pickled into an in-memory file (`memfd`) the parent reads once the child has
exited. A pipe was measured first: 106 MB of rows took 1.8 s through one, against 0.5 s to pickle and unpickle
them, as every 64 KB waited for the other side.

Forking is safe only while this process runs one thread: a lock some other thread held at the fork stays held
forever in the child. So a process running more than one thread (a daemon, a test runner's worker), or a
platform without a plain `fork`, works every share itself, in order — the same results, one core.

A child that fails in any way (an exception, a signal, running out of memory) says nothing and exits non-zero;
its share is then worked here, where an exception surfaces as it would have in a one-process run. No child outlives the
call.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO, Generic, NamedTuple, TypeVar

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
    safe. A child that cannot be started (no memory, no process slot, no in-memory file) or that fails has its
    share worked here."""
    if len(shares) <= 1 or not fork_is_safe():
        return Shared([work(share) for share in shares], 1)
    context = multiprocessing.get_context("fork")
    children: list[tuple[Any, BinaryIO] | None] = []
    try:
        for share in shares[1:]:
            children.append(_start(context, work, share))
        results = [work(shares[0])]
        processes = 1
        for share, started in zip(shares[1:], children, strict=True):
            if started is not None:
                child, spool = started
                child.join()
                if child.exitcode == 0:
                    results.append(_collect(spool))
                    processes += 1
                    continue
            results.append(work(share))  # the child never started or failed: worked here
        return Shared(results, processes)
    finally:
        for started in children:
            if started is not None:
                child, spool = started
                spool.close()
                if child.is_alive():
                    child.kill()
                child.join()


def _start(context: Any, work: Callable[[Share], Result], share: Share) -> tuple[Any, BinaryIO] | None:
    """A child working `share`, or None when the system would not give one.

    The child is born ignoring SIGINT: a Ctrl-C interrupts this process, which stops every child (a child
    interrupted on its own could print a traceback from inside multiprocessing before its own code runs).
    Only a single-threaded process forks, so this is its main thread, where signal handlers are set.
    """
    try:
        spool = _spool()
    except OSError:
        return None
    child = context.Process(target=_child, args=(work, share, spool), daemon=True)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        child.start()
    except OSError:
        spool.close()
        return None
    finally:
        signal.signal(signal.SIGINT, previous)
    return child, spool


def _spool() -> BinaryIO:
    """An unnamed file for one child's result: in memory where the kernel offers it, else a temp file."""
    if hasattr(os, "memfd_create"):
        return os.fdopen(os.memfd_create("theurian-share", os.MFD_CLOEXEC), "w+b")
    return tempfile.TemporaryFile()


def _collect(spool: BinaryIO) -> Any:
    spool.seek(0)
    return pickle.loads(spool.read())  # noqa: S301 - written by our own forked child, never by anyone else


def _child(work: Callable[[Share], Result], share: Share, spool: BinaryIO) -> None:
    try:
        pickle.dump(work(share), spool, protocol=pickle.HIGHEST_PROTOCOL)
        spool.flush()
    except BaseException:  # noqa: BLE001 - the parent redoes the share and reports whatever it raises
        os._exit(1)  # no traceback, no atexit handlers of the parent's
