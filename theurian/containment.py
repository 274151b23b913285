"""Path containment (SEC-7): every path the program opens resolves inside its root, symlinks included.

Anything a network or a repository file supplies (a record path, a file anchor) is data; it never reaches
`resolve_inside` as a path fragment unless it has first passed a strict pattern. This helper is the one place
that decides whether a path stays inside a root.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath

from theurian.errors import PathEscapeError


def resolve_inside(root: Path, relative: str | PurePosixPath) -> Path:
    """Resolve `relative` under `root`, following every symlink, and refuse a result outside `root`.

    The leaf need not exist: a path that does not exist yet resolves through its existing ancestors, so a
    symlinked parent directory is still caught before anything is created beneath it.

    Raises:
        PathEscapeError: the relative path is absolute, climbs with `..`, or resolves outside `root`.
    """
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts:
        raise PathEscapeError(f"{pure} is not a plain path under the root", relative=str(pure))
    try:
        resolved_root = root.resolve()
        resolved = (resolved_root / pure).resolve()
    except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError before 3.13), a too-long chain
        raise PathEscapeError(f"{pure} does not resolve (a symlink loop?)", relative=str(pure)) from exc
    if not _inside(resolved_root, resolved):
        escaped = first_failing_part(resolved_root, pure, lambda _, place: _inside(resolved_root, place))
        raise PathEscapeError(f"{escaped} resolves outside the root it must stay under", relative=str(escaped))
    return resolved


def _inside(root: Path, resolved: Path) -> bool:
    return resolved == root or root in resolved.parents


def first_failing_part(root: Path, relative: str | PurePosixPath,
                       holds: Callable[[PurePosixPath, Path], bool]) -> PurePosixPath:
    """The shortest leading part of `relative` under the resolved `root` that fails `holds(part, resolved place)`
    (one that cannot be resolved fails); `relative` itself when no shorter part does. It names the link to mend: when
    `.theurian` itself is a link, every path under it fails, and the cure is for `.theurian`, not for the folder
    that was asked for."""
    pure = PurePosixPath(relative)
    for length in range(1, len(pure.parts)):
        prefix = PurePosixPath(*pure.parts[:length])
        try:
            if not holds(prefix, (root / prefix).resolve()):
                return prefix
        except (RuntimeError, OSError):
            return prefix
    return pure
