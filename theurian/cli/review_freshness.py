"""Whether the evidence lake changed after the review store was built from it: the test `theurian doctor` and
`theurian project status` make before calling the store "current with the lake".

Every lake write is a rename into its kind folder (`theurian.durable`), and adding, removing or renaming a file
moves its folder's mtime; so a record ingested, deleted (the documented cure for leaked content is to delete the
file and rebuild) or moved since the build shows as a folder — the lake itself, a repository folder or a kind
folder — whose mtime is not older than the store's. A file edited in place moves only its own mtime, so each
record file is `lstat`ed too: the lake listing a build makes (`evidence.lake_listing.scan_records(identities=True)`,
measured in docs/operating.md). Mtimes, not ctimes: a project copied or restored whole (`cp -a`, `rsync -a`, a
backup) keeps every mtime, the store's included, but has every ctime at the copy, so a ctime test would call every
such store stale. The price: a file edited in place whose mtime was then set back (`touch -d`) is not seen.

Times are compared in nanoseconds, and a time equal to the store's counts as a change: a store published in the
same clock tick as a lake write may not hold it. What this cannot see: a change made while a build ran, after its
scan and before it published the store (it is older than the store's own time); the next ingest's run manifest,
or a second build, settles it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

from evidence.lake_listing import LakeEntry, scan_records
from evidence.records import KINDS
from theurian.containment import resolve_inside
from theurian.project import REVIEW_DIR
from theurian.text import shell_word

# A repository's last run, in `review status` and `project status`, when no run manifest names it.
NEVER_INGESTED: Final = "never ingested"

def lake_change_since(root: Path, folders: list[str], built_ns: int,
                      entries: list[LakeEntry] | None = None) -> str | None:
    """The first change to the lake at or after `built_ns` (a time in ns, the store's mtime), named for an
    operator, or None when none. `folders`: the lake's repository folders (`Lake.repository_folders`); `entries`:
    its listing with identities (`scan_records(identities=True)`), when the caller made one already.

    Raises:
        PathEscapeError: a folder of the lake resolves outside it (as a build would refuse it).
        OSError: the lake cannot be listed.
    """
    lake = resolve_inside(root, REVIEW_DIR)
    watched = [(REVIEW_DIR, lake)]
    for folder in folders:
        watched.append((f"{REVIEW_DIR}/{folder}", lake / folder))
        watched += [(f"{REVIEW_DIR}/{folder}/{kind}", lake / folder / kind) for kind in KINDS]
    for relative, path in watched:
        try:
            changed = os.stat(path).st_mtime_ns >= built_ns
        except FileNotFoundError:
            continue  # a kind folder never written; its repository folder's mtime says if one went away
        if changed:
            return f"a record was added, removed or renamed in {relative} since"
    if entries is None:
        entries, _ = scan_records(root, identities=True)
    for entry in entries:
        if entry.identity is not None and entry.identity[3] >= built_ns:
            return f"{REVIEW_DIR}/{entry.relative} was changed since"
    return None


def ingest_running(root: Path) -> bool:
    """Whether an ingest holds this project's lake now (`Lake.writing`, the lock every ingest takes for its whole
    run and the kernel drops when it dies): a manifest left `running` without it is a killed run's. The probe takes
    the lock for an instant, so an ingest starting in that instant is refused as if another ran (it says so, and
    writes nothing); call it only for a manifest that says `running`."""
    from evidence.errors import LakeBusyError
    from evidence.lake import Lake

    try:
        with Lake(root).writing():
            return False
    except LakeBusyError:
        return True


def interrupted_runs(root: Path, runs: list[dict[str, Any]]) -> None:
    """Mark each summary of `runs` whose manifest says `running` with `interrupted`: true when no ingest holds
    the lake (the run was killed), false while one does; an interrupted one also with `nextStep`, the command
    that covers its window again (`resume_command`). The lake is probed once, and only if one says so."""
    running = [run for run in runs if run.get("status") == "running"]
    if running:
        held = ingest_running(root)
        for run in running:
            run["interrupted"] = not held
            if not held:
                run["nextStep"] = resume_command(run, root)


def resume_command(run: dict[str, Any], root: Path) -> str:
    """The command that covers an interrupted run's window again, with the options it ran under: a killed run is
    never completed, so the next run of the same kind starts where the last completed one ended and converges on
    what the killed one would have written (`ingest.run`; what it wrote stays, each page durable)."""
    words = ["theurian review ingest"]
    since = (run.get("window") or {}).get("since")
    if run.get("mode") == "full":
        words.append("--full")
    elif run.get("mode") == "since" and since:
        words.append(f"--since {shell_word(str(since))}")
    if run.get("rescanOpen"):
        words.append("--rescan-open")
    words += [shell_word(str(run.get("repository"))), f"--project {shell_word(str(root))}"]
    return " ".join(words)


def interrupted_next_step(resume: str, root: Path) -> str:
    """What `review status` and `project status` say after an interrupted run: what happened, and the commands
    that finish it (`resume`: its `nextStep`, the `resume_command` `interrupted_runs` set)."""
    return (f"it was stopped before it finished (what it wrote is kept): `{resume}` covers its window again, then "
            f"`theurian review build --project {shell_word(str(root))}`")


def run_state(run: dict[str, Any]) -> str:
    """A run's status as an operator should read it: a `running` manifest no ingest holds is interrupted."""
    return INTERRUPTED if run.get("interrupted") else str(run.get("status"))


INTERRUPTED: Final = "interrupted (no ingest is running)"
