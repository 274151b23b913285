"""`fixCommitPresent`: the caller's fix commit exists in the project's local git repository and touched the
thread's file path. Verified with git itself, never believed.

The sha is a full 40- or 64-character hex, folded to lower case (`theurian.id_patterns.full_commit_sha`), before
it reaches git, so it can never be read as an option or a revision expression. The thread's path is compared as a
string with the paths git lists; it is data from the network and is never opened or passed to git. fsmonitor and
hooks are switched off for every call: a repository's own config must not make verifying a commit run a program.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from knowledge.errors import GitUnavailableError
from knowledge.promotion_gate import FAILED, FIX_COMMIT_PRESENT, MET, Signal

GIT_TIMEOUT_SECONDS: Final = 30.0
_SAFE_CONFIG: Final = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")


@dataclass(frozen=True)
class FixCommit:
    signal: Signal
    touched: tuple[str, ...]  # every path the commit changed, for the evidence trail (empty when absent)


def verify_fix_commit(root: Path, sha: str, thread_path: str) -> FixCommit:
    """Whether `sha` is a commit here that changed `thread_path` (relative to the repository's top level).

    Raises:
        GitUnavailableError: the project is not in a git repository, or git cannot be run.
    """
    if _git(root, "rev-parse", "--show-toplevel").returncode != 0:
        raise GitUnavailableError(
            "review.generateKnowledgeCandidate verifies fixCommit with git, and the project's folder is not "
            "inside a git repository; run it on a clone of the repository the thread belongs to"
        )
    source = f"git: commit {sha} in the project's repository"
    # The object itself must be a commit: `sha^{commit}` would peel an annotated tag to the commit it names, and
    # the evidence would then call the tag's sha a commit.
    kind = _git(root, "cat-file", "-t", sha)
    if kind.returncode != 0 or kind.stdout.strip() != b"commit":
        return FixCommit(Signal(FIX_COMMIT_PRESENT, FAILED, source, "no such commit exists here"), ())
    # A merge is compared with its first parent only: what it brought into the line it was merged into. Against
    # every parent (`-m`), a merge of an unrelated branch would "change" each file the main line changed since the
    # branch point.
    listed = _git(root, "diff-tree", "-z", "-r", "--diff-merges=first-parent", "--root", "--no-commit-id",
                  "--name-only", sha)
    if listed.returncode != 0:
        raise GitUnavailableError(f"git could not list the files commit {sha} changed")
    touched = tuple(sorted({name for name in listed.stdout.decode("utf-8", "replace").split("\0") if name}))
    if thread_path in touched:
        return FixCommit(Signal(FIX_COMMIT_PRESENT, MET, source,
                                f"the commit exists and changed the thread's file {thread_path}"), touched)
    return FixCommit(Signal(FIX_COMMIT_PRESENT, FAILED, source,
                            f"the commit exists but changed {len(touched)} file(s), none of them the thread's"),
                     touched)


def fix_commit_message(sha: str, thread_path: str) -> str:
    """One refusal for "no such commit" and "touched nothing the thread names": the difference is a fact about
    the repository's contents, not about the request."""
    return (
        f"FIX_COMMIT_NOT_VERIFIED: fixCommit {sha} is not a commit in this project's git repository that changed "
        f"the thread's file {thread_path!r}, so fixCommitPresent is not met and nothing was drafted. Name the "
        "full sha of the commit that fixed what the thread raised (fetch it first if this clone lacks it)."
    )


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", *_SAFE_CONFIG, *args], cwd=root, capture_output=True, timeout=GIT_TIMEOUT_SECONDS,
            check=False, stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitUnavailableError(f"git could not be run to verify fixCommit ({type(exc).__name__})") from exc
