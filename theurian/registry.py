"""The project registry: one hand-editable TOML file mapping project ids to root paths.

    [projects."backend-service"]
    root = "/home/dev/backend-service"

Writers take an exclusive lock on a sibling lock file and rewrite the file atomically, so two registrations at
once both land. A file that does not parse is reported and never overwritten: the operator's hand edit is theirs
to fix.
"""

from __future__ import annotations

import fcntl
import os
import re
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from theurian import installation, tomlwrite
from theurian.durable import write_text_durably
from theurian.errors import (
    AlreadyInPlaceError,
    ProjectError,
    ProjectNotRegisteredError,
    RegistryError,
    UnreadableFileError,
    UsageError,
)
from theurian.files import read_toml
from theurian.text import quoted, shell_word

PROJECT_ID_PATTERN: Final = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_PROJECT_ID_CHARS: Final = 64
LOCK_SUFFIX: Final = ".lock"  # the sibling lock file writers take: projects.toml.lock
EXAMPLE_PROJECT_ID: Final = "my-project"  # the refusal's example when nothing of the refused id folds to one
# A registration is a table of two lines, ~100 bytes plus its root's path (at most PATH_MAX, 4,096 bytes): this bound
# holds over 4,000 projects at the longest paths and 100,000 at common ones, and is still read whole in moments.
MAX_REGISTRY_FILE_BYTES: Final = 16 << 20

_HEADER = (
    "# Theurian project registry: one [projects.\"<id>\"] table per project, naming its root folder.\n"
    "# Hand edits are welcome; `theurian project register/unregister` rewrite this file keeping every key,\n"
    "# but not comments.\n"
)


@dataclass(frozen=True)
class Registration:
    project_id: str
    root: Path


@dataclass(frozen=True)
class RegistrySnapshot:
    """What one read of the registry found: servable registrations, and ids whose entries name no root."""

    registrations: tuple[Registration, ...]
    unreadable: tuple[str, ...]

    def find(self, project_id: str) -> Registration | None:
        return next((r for r in self.registrations if r.project_id == project_id), None)


def default_project_id(folder: Path) -> str:
    """The folder's name in lowercase kebab-case, e.g. `My_Service` -> `my-service`."""
    return _kebab(folder.name)


def _kebab(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def is_project_id(text: str) -> bool:
    """Whether `text` is an id `--id` takes (a hand-edited registry's keys need not be)."""
    # fullmatch: `$` also matches before a final newline, which let `--id $'proj\n'` register as "proj\n".
    return len(text) <= MAX_PROJECT_ID_CHARS and PROJECT_ID_PATTERN.fullmatch(text) is not None


def validate_project_id(project_id: str) -> str:
    """`project_id` when it is one; refused naming an id that is (`project_id` folded, else an example).

    Raises:
        UsageError: not lowercase kebab-case, or past MAX_PROJECT_ID_CHARS.
    """
    if not is_project_id(project_id):
        suggested = _kebab(project_id)[:MAX_PROJECT_ID_CHARS].rstrip("-") or EXAMPLE_PROJECT_ID
        raise UsageError(
            f"project id {quoted(project_id)} is not lowercase kebab-case (letters, digits and single hyphens, "
            f"at most {MAX_PROJECT_ID_CHARS} characters); pass one with --id, such as --id {suggested}"
        )
    return project_id


def not_registered(project_id: str) -> ProjectNotRegisteredError:
    """The one refusal of an id no registration carries (the CLI's and, with its code, an agent's): the id cut to
    MAX_PROJECT_ID_CHARS, which no registered id passes, so a pasted page of text stays one short line."""
    return ProjectNotRegisteredError(f"no project is registered under id {project_id[:MAX_PROJECT_ID_CHARS]!r}",
                                     project_id=project_id)


def read() -> RegistrySnapshot:
    """Read the registry; a missing file is an empty registry.

    Raises:
        RegistryError: the file exists but is not a registry we can read: not a regular file (a FIFO would hold
            every command and the daemon), past MAX_REGISTRY_FILE_BYTES, not UTF-8 or not TOML.
    """
    return _parse(_load_document(installation.registry_path()))


@dataclass(frozen=True)
class Registered:
    """What `register` did: the registration, and the root it took the id over from (a moved project), if any."""

    registration: Registration
    moved_from: Path | None = None


def register(root: Path, project_id: str) -> Registered:
    """Add a project; or, when `project_id` names a registration whose root holds no `.theurian/` (the project was
    moved or deleted, so nothing could be served under it), point that id at `root`: an agent configured with the
    id keeps reaching the project where it now is.

    Raises:
        UsageError: `project_id` is not one.
        AlreadyInPlaceError: this id already names this root (nothing is changed).
        ProjectError: `root` holds no `.theurian/`; the id names another project that is still there; or `root` is
            registered under another id.
    """
    validate_project_id(project_id)
    root = root.resolve()
    if not holds_project(root):
        raise ProjectError(f"{root} has no .theurian/ folder; run `theurian init {shell_word(str(root))}` first")
    moved_from: list[Path] = []

    def change(projects: dict[str, Any]) -> None:
        existing = projects.get(project_id)
        before = existing.get("root") if isinstance(existing, dict) else None
        if before == str(root):
            raise AlreadyInPlaceError(f"project {project_id!r} is already registered at {root}; nothing changed")
        for other_id, entry in projects.items():
            if isinstance(entry, dict) and entry.get("root") == str(root):
                raise ProjectError(f"{root} is already registered as {other_id!r}; to register it as {project_id!r} "
                                   f"instead, run `theurian project unregister {shell_word(other_id)} && theurian "
                                   f"project register {shell_word(str(root))} --id {project_id}`")
        if existing is not None:
            if _names_a_project(before):
                raise ProjectError(
                    f"project id {project_id!r} is already registered for another folder ({before}), which still "
                    f"holds .theurian/; run `theurian project unregister {project_id}` first or choose another --id"
                )
            if isinstance(before, str):
                moved_from.append(Path(before))
        projects[project_id] = {**(existing if isinstance(existing, dict) else {}), "root": str(root)}

    _update(change)
    return Registered(Registration(project_id, root), moved_from[0] if moved_from else None)


def holds_project(root: Path) -> bool:
    """Whether `root` holds `.theurian/`: what makes a registered folder one that can be served."""
    return (root / ".theurian").is_dir()


def _names_a_project(root: object) -> bool:
    return isinstance(root, str) and Path(root).is_absolute() and holds_project(Path(root))


def moved_cure(project_id: str, new_root: str = "NEW_PATH") -> str:
    """How the operator points `project_id` at the folder its project was moved to, keeping the id every agent
    configured with it names (registering the new folder alone would make a new id and leave this one broken)."""
    if is_project_id(project_id):
        return f"`theurian project register {new_root} --id {project_id}` (it keeps the id agents use)"
    # A hand-written key no `--id` takes: only a hand edit keeps it.
    return f"set its `root` to the new folder in {installation.registry_path()} (a hand edit keeps the id)"


def unreadable_cure(project_id: str) -> str:
    """How the operator mends a registration that names no root folder (`RegistrySnapshot.unreadable`): point the
    id at the project's folder, which keeps it (`register --id` takes over an entry with no root to serve), or
    drop it. Unregistering and registering again would keep the id only when the folder's default id is the same."""
    point = moved_cure(project_id, "PATH") + (", PATH being the project's folder" if is_project_id(project_id) else "")
    return f"{point}; if it is gone, `theurian project unregister {shell_word(project_id)}`"


def gone_because(root: Path) -> str | None:
    """Why nothing can be served at a registered `root` ("does not exist", "is not a folder", "holds no
    .theurian/"), as doctor's row says it; None when it holds a project."""
    if not root.is_dir():
        return "does not exist" if not os.path.lexists(root) else "is not a folder"
    return None if holds_project(root) else "holds no .theurian/"


def gone_cure(registration: Registration) -> str:
    """The cure doctor's row names for a registration `gone` lists. A folder that is gone: the move first, since
    registering the new folder alone would make a new id and leave this one, the one agents name, broken. A folder
    still there with no `.theurian/`: `init` there, or the move."""
    project_id, root = registration.project_id, registration.root
    if root.is_dir():
        return f"`theurian init {shell_word(str(root))}`; or, if the project moved, {moved_cure(project_id)}"
    return (f"if the project moved, {moved_cure(project_id)}; else restore it, or "
            f"`theurian project unregister {shell_word(project_id)}`")


def gone(snapshot: RegistrySnapshot) -> tuple[Registration, ...]:
    """The registrations whose root holds no `.theurian/` (moved or deleted): nothing can be served under them."""
    return tuple(r for r in snapshot.registrations if not holds_project(r.root))


def unregister(project_id: str) -> None:
    """Remove a project's registration (its files are untouched)."""

    def change(projects: dict[str, Any]) -> None:
        if project_id not in projects:
            raise not_registered(project_id)
        del projects[project_id]

    _update(change)


def _update(change: Callable[[dict[str, Any]], None]) -> None:
    path = installation.registry_path()
    with _exclusive_lock(path):
        document = _load_document(path)
        _parse(document)  # refuse to rewrite a file we could not have read
        projects: dict[str, Any] = dict(document.get("projects", {}))
        change(projects)
        try:
            rendered = _HEADER + tomlwrite.document({**document, "projects": projects})
            write_text_durably(path, rendered)
        except UnicodeEncodeError as exc:  # a folder name that is not valid UTF-8 (surrogate-escaped bytes)
            raise RegistryError("a project folder's path is not valid UTF-8, which the registry (TOML) cannot hold; "
                                "rename the folder") from exc


@contextmanager
def _exclusive_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + LOCK_SUFFIX), "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _load_document(path: Path) -> dict[str, Any]:
    try:  # a link followed: a dotfile manager links the installation's files from where it keeps them
        return read_toml(path, MAX_REGISTRY_FILE_BYTES, f"the project registry {path}", follow_link=True)
    except FileNotFoundError:
        return {}
    except UnreadableFileError as exc:
        raise RegistryError(exc.message,
                            agent_message=f"the project registry {exc.reason}; the operator must fix it by hand "
                                          "(`theurian doctor` names the file)") from exc


def _parse(document: dict[str, Any]) -> RegistrySnapshot:
    projects = document.get("projects", {})
    if not isinstance(projects, dict):
        path = installation.registry_path()
        raise RegistryError(f"the project registry {path}: `projects` must be a table; fix it by hand",
                            agent_message="the project registry's `projects` is not a table; the operator must "
                                          "fix it by hand (`theurian doctor` names the file)")
    registrations = []
    unreadable = []
    for project_id, entry in projects.items():
        root = entry.get("root") if isinstance(entry, dict) else None
        if isinstance(root, str) and root and Path(root).is_absolute():  # relative: relative to what?
            registrations.append(Registration(project_id, Path(root)))
        else:
            unreadable.append(project_id)
    return RegistrySnapshot(
        registrations=tuple(sorted(registrations, key=lambda r: r.project_id)),
        unreadable=tuple(sorted(unreadable)),
    )
