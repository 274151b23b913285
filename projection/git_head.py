"""Which commit HEAD names, read cheaply enough to ask on every served call.

HEAD's sha is read from the repository's own files (`.git/HEAD`, a loose ref, `packed-refs`), so asking costs a
few small reads and no process: a `.git` that is a file (a worktree, a submodule) is followed to its git dir and
that dir's `commondir`, a detached HEAD names its sha itself, and an unborn HEAD (no commit yet) names none. A
layout these reads do not know (a reftable repository, a symbolic ref loop) is asked of git instead.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Final

_SHA: Final = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")
_MAX_SYMREF_HOPS: Final = 5
_MAX_REMEMBERED: Final = 1024
_GIT_TIMEOUT_SECONDS: Final = 30
_located: dict[Path, tuple[tuple[int, int, int], Path, Path]] = {}


class _AskGit(Exception):  # noqa: N818 - internal signal: these files cannot answer, git itself must
    pass


def in_repository(root: Path) -> bool:
    """Whether `root` lies in a git repository (a `.git` in it or above it), HEAD born or not."""
    return _dot_git(root) is not None


def _dot_git(root: Path) -> Path | None:
    return next((folder / ".git" for folder in (root, *root.parents) if (folder / ".git").exists()), None)


def head_sha(root: Path) -> str | None:
    """The sha HEAD names for the repository `root` lies in, or None (no repository, or an unborn HEAD)."""
    try:
        return _from_files(root)
    except _AskGit:
        out = _git(root, "rev-parse", "--verify", "--quiet", "HEAD")
        return out if out is not None and _SHA.fullmatch(out.encode("ascii", "replace")) else None


def _from_files(root: Path) -> str | None:
    dot_git = _dot_git(root)
    if dot_git is None:
        return None
    git_dir, common = _folders(dot_git)
    content = _read(git_dir / "HEAD").strip()
    for _ in range(_MAX_SYMREF_HOPS):
        if _SHA.fullmatch(content):
            return content.decode("ascii")
        if not content.startswith(b"ref: "):
            raise _AskGit
        name = content[5:].strip().decode("utf-8", "surrogateescape")
        if name == "refs/heads/.invalid":  # the placeholder HEAD of a reftable repository
            raise _AskGit
        found = _ref(git_dir, common, name)
        if found is None:
            return None  # unborn: the branch HEAD names has no commit yet
        content = found
    raise _AskGit


def _folders(dot_git: Path) -> tuple[Path, Path]:
    """The git dir `dot_git` names and its common dir, remembered while `dot_git` is unchanged (resolving them
    was most of a call's cost)."""
    try:
        stat = dot_git.stat()
    except OSError as exc:
        raise _AskGit from exc
    key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
    known = _located.get(dot_git)
    if known is not None and known[0] == key:
        return known[1], known[2]
    git_dir = _git_dir(dot_git)
    common = git_dir
    if (git_dir / "commondir").is_file():
        common = (git_dir / _read(git_dir / "commondir").strip().decode("utf-8", "surrogateescape")).resolve()
    if len(_located) >= _MAX_REMEMBERED:
        _located.clear()
    _located[dot_git] = (key, git_dir, common)
    return git_dir, common


def _git_dir(dot_git: Path) -> Path:
    if dot_git.is_dir():
        return dot_git
    text = _read(dot_git).strip()
    if not text.startswith(b"gitdir: "):
        raise _AskGit
    return (dot_git.parent / text[8:].strip().decode("utf-8", "surrogateescape")).resolve()


def _ref(git_dir: Path, common: Path, name: str) -> bytes | None:
    # Per-worktree refs (HEAD's own folder) first, then the shared ones, as git looks them up.
    for folder in dict.fromkeys((git_dir, common)):
        loose = folder / name
        if loose.is_file():
            return _read(loose).strip()
    packed = common / "packed-refs"
    if not packed.is_file():
        return None
    wanted = name.encode("utf-8", "surrogateescape")
    for line in _read(packed).splitlines():
        sha, _, ref = line.partition(b" ")
        if ref.strip() == wanted and _SHA.fullmatch(sha):
            return sha
    return None


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise _AskGit from exc


def _git(root: Path, *args: str) -> str | None:
    # As `findings build` asks git: no GIT_* of the caller's pointing it at another repository.
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    try:
        done = subprocess.run(["git", "-c", "log.showSignature=false", "-C", str(root), *args],
                              capture_output=True, text=True, timeout=_GIT_TIMEOUT_SECONDS, check=False, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
