"""Reading a project's commit history through git itself, in one `git log` pass.

Fields are NUL-separated (`-z` plus `%x00`): a commit message cannot carry a NUL, so no body can shift the
framing, and the framing is still checked (every sha is hex) rather than trusted.

A committer date is data a commit object carries, not framing: a crafted or damaged commit (a clone can carry
one) may hold a date git prints as nothing at all (negative, not a number) or as seconds no served timestamp can
name (past year 9999). Such a commit comes back with `committed_at` None, for the build to skip and count; one
odd commit never makes the whole history unreadable.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from projection.errors import GitHistoryError

_FORMAT: Final = "--format=%H%x00%ct%x00%B"
_SHA: Final = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_EPOCH: Final = re.compile(r"-?[0-9]+")
# Never let configuration a repository carries start another program (gpg for signatures, a pager, colour).
_SAFE_CONFIG: Final = ("-c", "log.showSignature=false", "-c", "core.pager=cat", "-c", "color.ui=never")


@dataclass(frozen=True)
class Commit:
    sha: str
    committed_at: str | None  # RFC 3339 in UTC with microseconds, as served; None when unreadable
    message: str


def format_committed_at(epoch_seconds: int) -> str:
    """`2026-08-28T09:14:22.000000+00:00`: fixed width, so text order is time order.

    Raises:
        ValueError, OverflowError, OSError: the seconds name no time in years 1 to 9999.
    """
    return datetime.fromtimestamp(epoch_seconds, tz=UTC).isoformat(timespec="microseconds")


def _committed_at(epoch: str) -> str | None:
    if not _EPOCH.fullmatch(epoch):
        return None  # git prints nothing for a date it cannot parse (a negative one included)
    try:
        return format_committed_at(int(epoch))
    except (ValueError, OverflowError, OSError):
        return None


def read_commits(root: Path, head: str | None) -> Iterator[Commit]:
    """Every commit reachable from `head` (the sha HEAD named when the caller asked, `projection.git_head.head_sha`),
    newest first as git lists them; nothing when `head` is None (HEAD has no commit yet). Reading from the sha, not
    from HEAD again, keeps the history the one the caller records, whatever HEAD does meanwhile.

    A `head` naming an object the repository lacks (a damaged or partial clone) fails the log, loudly, rather than
    reading as an empty history that would replace a store of findings with none.

    Raises:
        GitHistoryError: git is missing, `root` is not in a git repository, or git's output cannot be framed.
    """
    _git(root, "rev-parse", "--git-dir")  # raises when root is not inside a repository at all
    if head is None:
        return iter(())
    output = _git(root, "log", "--no-color", "--no-show-signature", "-z", _FORMAT, head, "--")
    return _parse(output)


def _git(root: Path, *args: str) -> bytes:
    # GIT_DIR and friends from the caller's environment would point git at some other repository.
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    try:
        completed = subprocess.run(
            ["git", *_SAFE_CONFIG, "-C", str(root), *args], capture_output=True, env=env, check=False
        )
    except FileNotFoundError as exc:
        raise GitHistoryError("git is not installed or not on PATH; install git and run again") from exc
    if completed.returncode != 0:
        detail = completed.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = detail[0] if detail else f"git exited {completed.returncode}"
        raise GitHistoryError(f"cannot read the git history of {root}: {reason}")
    return completed.stdout


def _parse(output: bytes) -> Iterator[Commit]:
    fields = output.split(b"\x00")
    if fields and fields[-1] == b"":
        fields.pop()
    if len(fields) % 3:
        raise GitHistoryError("git log output could not be framed into commits; nothing was built")
    for index in range(0, len(fields), 3):
        sha = fields[index].lstrip(b"\n").decode("ascii", "replace")
        epoch = fields[index + 1].decode("ascii", "replace")
        if not _SHA.fullmatch(sha):
            raise GitHistoryError("git log output could not be framed into commits; nothing was built")
        message = fields[index + 2].decode("utf-8", "surrogateescape")
        yield Commit(sha, _committed_at(epoch), message)
