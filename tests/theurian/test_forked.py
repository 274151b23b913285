"""theurian.forked.map_shares: shares after the first worked in forked children, results in order, a failed child's
share worked in the parent, and no fork at all from a process running a second thread.

Each case runs in a fresh interpreter: a test runner's worker may run threads of its own, and then (rightly) no
share is ever forked."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from typing import Any

import orjson

PRELUDE = """
import errno, os, signal, sys, threading
import orjson
from theurian.forked import fork_is_safe, map_shares
PARENT = os.getpid()
def report(value):
    sys.stdout.write(orjson.dumps(value).decode())
def children_left():
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return 0
    return 1
"""


def _run(body: str) -> tuple[Any, str]:
    script = PRELUDE + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return orjson.loads(done.stdout), done.stderr


def test_each_share_after_the_first_is_worked_in_a_child_and_the_results_keep_their_order() -> None:
    result, stderr = _run("""
        assert fork_is_safe()
        shared = map_shares(lambda share: [share, os.getpid()], ["a", "b", "c"])
        report({"results": shared.results, "processes": shared.processes, "parent": PARENT,
                "left": children_left()})
    """)
    shares = [share for share, _ in result["results"]]
    pids = [pid for _, pid in result["results"]]
    assert shares == ["a", "b", "c"]
    assert pids[0] == result["parent"]
    assert result["parent"] not in pids[1:] and pids[1] != pids[2]
    assert result["processes"] == 3
    assert result["left"] == 0 and stderr == ""


def test_a_child_that_fails_in_any_way_has_its_share_worked_here_and_says_nothing() -> None:
    result, stderr = _run("""
        def work(share):
            if os.getpid() != PARENT:
                if share == "raises":
                    raise RuntimeError("boom in the child")
                if share == "exits":
                    os._exit(3)
                os.kill(os.getpid(), signal.SIGKILL)
            return [share, os.getpid()]
        shared = map_shares(work, ["here", "raises", "exits", "killed"])
        report({"results": shared.results, "processes": shared.processes, "parent": PARENT})
    """)
    assert result["results"] == [[share, result["parent"]] for share in ("here", "raises", "exits", "killed")]
    assert result["processes"] == 1  # no child's result was used
    assert stderr == ""  # no child's traceback reaches the user


def test_an_exception_a_share_raises_surfaces_in_the_parent_as_in_one_process() -> None:
    result, stderr = _run("""
        def work(share):
            if share == 2:
                raise ValueError(f"share {share} is bad")
            return share
        try:
            map_shares(work, [1, 2])
        except ValueError as error:
            report({"raised": str(error), "left": children_left()})
    """)
    assert result == {"raised": "share 2 is bad", "left": 0}
    assert stderr == ""


def test_a_process_running_a_second_thread_forks_nothing_and_works_every_share_itself() -> None:
    result, _ = _run("""
        stop = threading.Event()
        waiting = threading.Thread(target=stop.wait)
        waiting.start()
        try:
            safe = fork_is_safe()
            pids = map_shares(lambda share: os.getpid(), [1, 2, 3]).results
        finally:
            stop.set()
            waiting.join()
        report({"safe": safe, "pids": pids, "parent": PARENT})
    """)
    assert result["safe"] is False
    assert result["pids"] == [result["parent"]] * 3


def test_a_child_the_system_will_not_start_has_its_share_worked_here() -> None:
    result, stderr = _run("""
        import theurian.forked as forked
        def no_memory():
            raise OSError(12, "Cannot allocate memory")
        forked._spool = no_memory
        shared = map_shares(lambda share: [share, os.getpid()], ["a", "b"])
        report({"results": shared.results, "processes": shared.processes, "parent": PARENT})
    """)
    assert result["results"] == [["a", result["parent"]], ["b", result["parent"]]]
    assert result["processes"] == 1 and stderr == ""


def test_a_child_is_born_ignoring_ctrl_c_and_the_parent_is_not() -> None:
    result, _ = _run("""
        shared = map_shares(lambda share: str(signal.getsignal(signal.SIGINT)), ["parent", "child"])
        report({"handlers": shared.results, "after": str(signal.getsignal(signal.SIGINT))})
    """)
    assert result["handlers"][1] == str(signal.SIG_IGN)
    assert result["handlers"][0] == result["after"] != str(signal.SIG_IGN)


def test_when_the_system_will_not_fork_the_shares_are_worked_here_no_more_forks_are_tried_and_nothing_leaks() -> None:
    result, stderr = _run("""
        tries = []
        def no_process_slot():
            tries.append(1)
            raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
        os.fork = no_process_slot
        descriptors = len(os.listdir("/proc/self/fd"))
        shared = map_shares(lambda share: [share, os.getpid()], ["a", "b", "c", "d"])
        report({"results": shared.results, "processes": shared.processes, "tries": len(tries),
                "leaked": len(os.listdir("/proc/self/fd")) - descriptors, "parent": PARENT,
                "mask": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, set()))})
    """)
    assert result["results"] == [[share, result["parent"]] for share in "abcd"]
    assert (result["processes"], result["tries"], result["leaked"]) == (1, 1, 0)
    assert result["mask"] == []  # SIGINT is not left blocked
    assert stderr == ""


def test_a_child_result_that_cannot_be_read_back_is_worked_here() -> None:
    result, stderr = _run("""
        def cannot_rebuild():
            raise RuntimeError("no")
        class Unreadable:
            def __reduce__(self):
                return (cannot_rebuild, ())
        shared = map_shares(lambda share: [share, os.getpid(), Unreadable()], ["a", "b"])
        report({"results": [[s, pid] for s, pid, _ in shared.results], "processes": shared.processes,
                "parent": PARENT, "left": children_left()})
    """)
    assert result["results"] == [["a", result["parent"]], ["b", result["parent"]]]
    assert (result["processes"], result["left"]) == (1, 0) and stderr == ""
