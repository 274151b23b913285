"""The project registry: one hand-editable TOML file mapping project ids to root paths.

    [projects."backend-service"]
    root = "/home/dev/backend-service"

Writers take an exclusive lock on a sibling lock file and rewrite the file atomically, so two registrations at
once both land. A file that does not parse is reported and never overwritten: the operator's hand edit is theirs
to fix.
"""

from __future__ import annotations

import fcntl
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


def validate_project_id(project_id: str) -> str:
    """`project_id` when it is one; refused naming an id that is (`project_id` folded, else an example).

    Raises:
        UsageError: not lowercase kebab-case, or past MAX_PROJECT_ID_CHARS.
    """
    if len(project_id) > MAX_PROJECT_ID_CHARS or not PROJECT_ID_PATTERN.match(project_id):
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


def register(root: Path, project_id: str) -> Registration:
    """Add a project. Raises AlreadyInPlaceError if this id already names this root."""
    validate_project_id(project_id)
    root = root.resolve()
    if not (root / ".theurian").is_dir():
        raise ProjectError(f"{root} has no .theurian/ folder; run `theurian init {shell_word(str(root))}` first")

    def change(projects: dict[str, Any]) -> None:
        existing = projects.get(project_id)
        if isinstance(existing, dict) and existing.get("root") == str(root):
            raise AlreadyInPlaceError(f"project {project_id!r} is already registered at {root}; nothing changed")
        if existing is not None:
            raise ProjectError(
                f"project id {project_id!r} is already registered for another folder; "
                f"run `theurian project unregister {project_id}` first or choose another --id"
            )
        for other_id, entry in projects.items():
            if isinstance(entry, dict) and entry.get("root") == str(root):
                raise ProjectError(f"{root} is already registered as {other_id!r}")
        projects[project_id] = {"root": str(root)}

    _update(change)
    return Registration(project_id, root)


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
    with open(path.with_name(path.name + ".lock"), "a+b") as lock:
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
