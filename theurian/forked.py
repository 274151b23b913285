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
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO, TypeVar

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


def map_shares(work: Callable[[Share], Result], shares: Sequence[Share]) -> list[Result]:
    """`[work(share) for share in shares]`, the shares after the first worked in forked children when that is
    safe. Results come back in the order of `shares`."""
    if len(shares) <= 1 or not fork_is_safe():
        return [work(share) for share in shares]
    context = multiprocessing.get_context("fork")
    children: list[tuple[Any, BinaryIO]] = []
    try:
        for share in shares[1:]:
            spool = _spool()
            child = context.Process(target=_child, args=(work, share, spool), daemon=True)
            children.append((child, spool))
            child.start()
        results = [work(shares[0])]
        for share, (child, spool) in zip(shares[1:], children, strict=True):
            child.join()
            results.append(_collect(spool) if child.exitcode == 0 else work(share))  # failed: worked here
        return results
    finally:
        for child, spool in children:
            spool.close()
            if child.pid is not None:
                if child.is_alive():
                    child.kill()
                child.join()


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
