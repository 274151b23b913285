"""A project on disk: its `.theurian/` layout, `theurian init`, and resolving a registered id to a usable root.

Resolution is where SEC-7 first bites: `.theurian/state` resolving outside the project root is refused here,
before any project-scoped tool reads anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Final

from theurian import registry
from theurian.containment import resolve_inside
from theurian.durable import write_text_durably
from theurian.errors import (
    AlreadyInPlaceError,
    PathEscapeError,
    ProjectError,
    ProjectUnreadableError,
    StateEscapeError,
)
from theurian.project_path import project_path_refusal
from theurian.text import quoted, shell_word

THEURIAN_DIR: Final = ".theurian"
STATE_DIR: Final = ".theurian/state"
REVIEW_DIR: Final = ".theurian/review"
CONFIG_FILE: Final = ".theurian/config.toml"
MIGRATIONS_DIR: Final = f"{THEURIAN_DIR}/migrations"
KNOWLEDGE_DIR: Final = f"{THEURIAN_DIR}/knowledge"
PROPOSALS_DIR: Final = f"{THEURIAN_DIR}/proposals"
# The derived files under STATE_DIR, named here so the place table (theurian.places) and the stage that writes
# each file (its module takes the name from here) cannot disagree about it.
FINDINGS_STORE_NAME: Final = "theurian-findings-local.sqlite"
REVIEW_STORE_NAME: Final = "review-store.duckdb"
KNOWLEDGE_POINTER_NAME: Final = "knowledge-active.json"
KNOWLEDGE_STATE_PREFIX: Final = "knowledge-state-"  # then a ULID and `.sqlite`
INDEX_POINTER_NAME: Final = "knowledge-index.json"
INDEX_FILE_PREFIX: Final = "knowledge-index-"  # then a ULID and `.sqlite`
# Not derived: the hashes a `review scan` is writing, kept until the manifests record them (evidence.lake_scan).
SCAN_JOURNAL_NAME: Final = "review-scan.journal"

INITIAL_CONFIG: Final = """\
# Theurian project configuration.

[review]
# Public GitHub repositories `theurian review ingest` may fetch, as "owner/name".
# Edit by hand or with `theurian review allow OWNER/NAME`.
allowlist = []
# Secrets found in ingested text: "redact" (the default), "block", "warn" or "off" (docs/secrets.md).
# secrets = "redact"
# Replace author logins and ids with stable pseudonyms keyed by .theurian/review.salt.
# redact_participants = false
"""

# Derived state is rebuildable and never committed; everything else under .theurian/ is source.
INITIAL_GITIGNORE: Final = "state/\n"


@dataclass(frozen=True)
class Project:
    project_id: str
    root: Path


def init_project(root: Path) -> Path:
    """Create `.theurian/` with an empty review allowlist and a .gitignore for derived state.

    Raises:
        AlreadyInPlaceError: `.theurian/config.toml` already exists (nothing is changed).
        ProjectError: the folder does not exist, is not a folder, lies inside a `.theurian` folder, or its path is
            not UTF-8 text or holds `?` or `\\` (`theurian.project_path`; nothing is created: such a project could
            be neither registered nor served).
    """
    _check_project_folder(root)
    theurian_dir = resolve_inside(root, THEURIAN_DIR)
    config = theurian_dir / "config.toml"
    if config.exists():
        raise AlreadyInPlaceError(f"{config} already exists; nothing changed")
    _make_theurian_dir(root, theurian_dir)
    write_text_durably(config, INITIAL_CONFIG)
    gitignore = theurian_dir / ".gitignore"
    if not gitignore.exists():
        write_text_durably(gitignore, INITIAL_GITIGNORE)
    return theurian_dir


def _make_theurian_dir(root: Path, theurian_dir: Path) -> None:
    """Create `.theurian/` in `root` (checked to be a folder), giving the file system's bare answer its place.

    Raises:
        ProjectError: `.theurian` is there and is not a folder, or the file system says `root` is missing when it
            exists (a virtual file system such as /proc). Any other refusal (permission, a full disk) is the
            top-level handler's to word.
    """
    if theurian_dir.exists() and not theurian_dir.is_dir():
        raise ProjectError(f"{theurian_dir} exists and is not a folder: move it aside, then run "
                           f"`theurian init {shell_word(str(root))}` again")
    try:
        theurian_dir.mkdir(exist_ok=True)
    except FileNotFoundError as exc:
        raise ProjectError(f"cannot create {theurian_dir}: the file system answered {quoted(exc.strerror or '')}, "
                           f"though {root} exists (a virtual file system such as /proc takes no new folder); run "
                           "init in a project folder on disk") from exc


def _check_project_folder(root: Path) -> None:
    """Refuse a `root` init cannot make a project of, naming the cure.

    Raises:
        ProjectError: it does not exist, is not a folder, is (inside) a `.theurian` folder, or its path is one no
            project may have (`theurian.project_path`).
    """
    if THEURIAN_DIR in root.parts:
        # `init proj/.theurian` would make `.theurian/.theurian`: a project nobody's commands would ever find.
        project = Path(*root.parts[:root.parts.index(THEURIAN_DIR)])
        raise ProjectError(f"{root} is a project's {THEURIAN_DIR} folder or inside one, not a project folder; "
                           f"run `theurian init {shell_word(str(project))}` for the project that holds it")
    if not root.exists():
        raise ProjectError(f"{root} does not exist; create the folder first, or name an existing one")
    if not root.is_dir():
        raise ProjectError(f"{root} is not a folder")
    refusal = project_path_refusal(root, "theurian init {}")
    if refusal is not None:
        raise ProjectError(refusal)


def resolve_project(project_id: str) -> Project:
    """Resolve a registered id to a project whose root exists and whose derived state stays inside it.

    Raises:
        RegistryError: the registry cannot be read.
        ProjectNotRegisteredError, ProjectUnreadableError, ProjectError: the id cannot be served.
        StateEscapeError: `.theurian/state` (or `.theurian` itself, named as `relative`) resolves outside the root.
    """
    snapshot = registry.read()
    registration = snapshot.find(project_id)
    if registration is None:
        if project_id in snapshot.unreadable:
            raise ProjectUnreadableError(
                f"project {quoted(project_id, 200)}: its registry entry names no absolute root path; "
                f"{registry.unreadable_cure(project_id)}"
            )
        raise registry.not_registered(project_id)
    root = registration.root
    if not registry.holds_project(root):
        raise ProjectError(
            f"project {quoted(project_id, 200)} is registered at a folder with no .theurian/ (moved or deleted?): "
            "if it moved, "
            f"{registry.moved_cure(project_id)}; if it is gone, `theurian project unregister {shell_word(project_id)}`"
        )
    project = Project(project_id, root.resolve())
    try:
        resolve_inside(project.root, STATE_DIR)
    except PathEscapeError as exc:
        raise StateEscapeError(exc.message, relative=exc.relative) from exc
    return project
