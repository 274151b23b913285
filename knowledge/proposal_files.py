"""Where proposals live and how their files are created: exclusively, durably, inside the project root.

Every directory is created with `mkdir` (never `exist_ok`) under a fresh ULID and every file with `O_EXCL`, so two
drafts running at the same moment can never write into one directory or over one file: a collision is an error
the writer retries under a new id, never a silent overwrite.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from ulid import ULID

from knowledge.errors import FolderRedirectedError, NotAFolderError
from theurian.containment import first_failing_part, resolve_inside
from theurian.durable import fsync_directory
from theurian.errors import PathEscapeError
from theurian.id_patterns import ULID_PATTERN
from theurian.project import PROPOSALS_DIR

EVIDENCE_NAME: Final = "evidence.json"
PROPOSAL_ID: Final = ULID_PATTERN
_ATTEMPTS: Final = 8


def own_folder(root: Path, relative: str) -> Path:
    """`root/relative` resolved, refused unless it resolves to exactly that place.

    Containment in the project is not enough here: `.theurian/proposals -> knowledge` stays inside the project
    yet would put a draft beside the canonical sources, so any redirection at all is refused.

    Raises:
        FolderRedirectedError: a symlink sends `relative` anywhere else (inside the project or out of it).
        NotAFolderError: something other than a folder sits at `relative`.
    """
    try:
        resolved = resolve_inside(root, relative)
    except PathEscapeError:
        raise FolderRedirectedError(_first_redirected(root, relative)) from None
    if resolved != root.resolve() / relative:
        raise FolderRedirectedError(_first_redirected(root, relative))
    if resolved.exists() and not resolved.is_dir():
        raise NotAFolderError(relative)
    return resolved


def _first_redirected(root: Path, relative: str) -> str:
    """The shortest leading part of `relative` that does not resolve to its own place: the link to replace (when
    `.theurian` itself is the link, replacing `.theurian/proposals` would mend nothing)."""
    base = root.resolve()
    return str(first_failing_part(base, relative, lambda part, place: place == base / part))


def proposal_folder(root: Path) -> tuple[Path, str]:
    """A new, empty proposal directory created exclusively; returns it and its id.

    Raises:
        FolderRedirectedError: `.theurian/proposals` is redirected by a symlink.
        NotAFolderError: something other than a folder sits at `.theurian/proposals`, or at a folder above it.
    """
    parent = own_folder(root, PROPOSALS_DIR)
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except (NotADirectoryError, FileExistsError):  # a file where `.theurian` (or a folder above) should be
        raise NotAFolderError(PROPOSALS_DIR) from None
    for _ in range(_ATTEMPTS):
        proposal_id = str(ULID())
        folder = resolve_inside(parent, proposal_id)
        try:
            folder.mkdir()
        except FileExistsError:
            continue  # another writer drew the same id: draw again, never share
        fsync_directory(parent)
        return folder, proposal_id
    raise FileExistsError(f"no fresh proposal directory after {_ATTEMPTS} attempts under {PROPOSALS_DIR}")


def existing_folder(root: Path, proposal_id: str) -> Path | None:
    """The proposal's directory when `proposal_id` is a ULID and the directory exists, else None."""
    if not PROPOSAL_ID.fullmatch(proposal_id):
        return None
    folder = resolve_inside(own_folder(root, PROPOSALS_DIR), proposal_id)
    return folder if folder.is_dir() else None


def write_new(folder: Path, relative: str, data: bytes) -> Path:
    """Create `folder/relative` (parents included) with `data`, refusing to replace anything, and fsync it.

    Raises:
        FileExistsError: the file already exists.
        PathEscapeError: the path resolves outside `folder`.
    """
    path = resolve_inside(folder, relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    fsync_directory(path.parent)
    return path


def link_new(source: Path, destination: Path) -> None:
    """Give `source` a second name, `destination`, which must not exist (a hard link: never a replace), and make
    the new name durable. The source keeps its name: the caller removes it once every link is in place.

    Raises:
        FileExistsError: the destination exists.
    """
    destination.parent.mkdir(parents=True, exist_ok=True)
    os.link(source, destination)
    fsync_directory(destination.parent)


def same_file(one: Path, other: Path) -> bool:
    """Whether both names are links to one file (so an interrupted accept left this one), never following a link."""
    try:
        first, second = os.lstat(one), os.lstat(other)
    except FileNotFoundError:
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def relative_to_root(root: Path, path: Path) -> str:
    """A project-relative POSIX path, as payloads and messages name files."""
    return path.relative_to(root.resolve()).as_posix()
