"""pytest-xdist's `--dist loadfile` (what `make test` runs), with the modules that read one session-wide build
handed out as one work unit.

`tests/support/demo_build.shared_demo` builds `make demo`'s folder once per session under a lock: the first worker
to ask builds it (about 25 s quiet, 40 s loaded) and any other worker asking meanwhile waits on the lock, idle.
test_demo.py and test_doctor.py are next to each other in collection order, so loadfile gave them to the two
workers at once and one of them waited out the whole build. As one unit they run on one worker, one after the
other (test_demo first, as collected), and the other worker goes on with other modules.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadFileScheduling

# A module's file -> the unit it joins (the file of the unit's last module, so the unit sorts as that one does).
SHARED_UNITS = {"tests/e2e/test_demo.py": "tests/e2e/test_doctor.py"}  # both read demo_build.shared_demo


def work_unit(nodeid: str) -> str:
    """The work unit of a collected test: its module's file, or the unit that module shares."""
    module = nodeid.split("::", 1)[0]
    return SHARED_UNITS.get(module, module)


class SharedUnitScheduling(LoadFileScheduling):  # type: ignore[misc]  # xdist ships no type information
    """`--dist loadfile` over `work_unit`s; everything else (order, hand-out) is loadfile's own."""

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)


def scheduler(config: Any, log: Any) -> SharedUnitScheduling | None:
    """The scheduler for `--dist loadfile`; None (xdist's own choice) for any other mode."""
    return SharedUnitScheduling(config, log) if config.getvalue("dist") == "loadfile" else None
