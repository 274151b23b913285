"""theurian.interrupts: a watched Ctrl-C is raised and noted, so one that native code swallows is still raised at
`check()`; a deferred or held one waits for the block's end; Python's handler is always put back; and nothing
changes in another thread or where someone else handles SIGINT."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

import pytest

from theurian.interrupts import ignored_from_here, interrupts_held, watching_interrupts


def _ctrl_c() -> None:
    signal.raise_signal(signal.SIGINT)


def test_a_watched_ctrl_c_is_raised_and_one_swallowed_is_raised_again_at_check() -> None:
    with watching_interrupts() as interrupts:
        with pytest.raises(KeyboardInterrupt):
            _ctrl_c()
        try:
            _ctrl_c()
        except KeyboardInterrupt:
            pass  # what native code that clears the error does
        with pytest.raises(KeyboardInterrupt):
            interrupts.check()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_deferred_ctrl_c_is_only_noted() -> None:
    with watching_interrupts() as interrupts:
        with interrupts.deferred():
            _ctrl_c()
            finished = True
        assert finished and interrupts.noted


def test_once_done_a_ctrl_c_is_ignored_and_one_noted_before_is_forgotten() -> None:
    with watching_interrupts() as interrupts:
        with interrupts.deferred():
            _ctrl_c()
            interrupts.done()
        _ctrl_c()  # not raised: the job has happened
        interrupts.check()
        assert not interrupts.noted
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_held_block_runs_to_its_end_and_its_ctrl_c_is_raised_after() -> None:
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_held():
            _ctrl_c()
            steps.append("ran on")
    assert steps == ["ran on"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_nothing_changes_in_another_thread_or_under_someone_elses_handler() -> None:
    seen: list[object] = []

    def in_thread() -> None:
        with watching_interrupts() as interrupts:
            seen.append(signal.getsignal(signal.SIGINT))
            interrupts.check()

    worker = threading.Thread(target=in_thread)
    worker.start()
    worker.join()
    assert seen == [signal.default_int_handler]

    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        with watching_interrupts() as interrupts:
            _ctrl_c()
            interrupts.check()  # never raises: the Ctrl-C was someone else's to handle
        assert caught == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ignoring_ctrl_c_for_the_rest_of_the_process_changes_nothing_from_another_thread_or_another_handler(
        ) -> None:
    worker = threading.Thread(target=ignored_from_here)
    worker.start()
    worker.join(timeout=10)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with watching_interrupts() as interrupts:  # someone else's handler: left in place
        ignored_from_here()
        assert signal.getsignal(signal.SIGINT) == interrupts.handle
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler



# SIGTERM taken as Ctrl-C: inside a watch it is that watch's interrupt; where SIGINT is ignored it keeps its default.
_TERM_AS_CTRL_C = """
import os, signal, sys
from theurian.interrupts import terminated_as_interrupted, was_terminated, watching_interrupts
if len(sys.argv) > 1:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell starts a command in the background
terminated_as_interrupted()
with watching_interrupts() as interrupts:
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(10_000):  # bytecodes, where the handler runs
            pass
        print("ran on", flush=True)
    except KeyboardInterrupt:
        print("stopped as Ctrl-C", was_terminated(), interrupts.noted, flush=True)
"""


def test_a_sigterm_is_taken_as_the_watched_ctrl_c() -> None:
    done = subprocess.run([sys.executable, "-c", _TERM_AS_CTRL_C], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "stopped as Ctrl-C True True\n", "")


def test_a_sigterm_where_ctrl_c_is_ignored_ends_the_process_as_its_default_does() -> None:
    done = subprocess.run([sys.executable, "-c", _TERM_AS_CTRL_C, "ignoring"], capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stdout) == (-signal.SIGTERM, "")
