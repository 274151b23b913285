"""The entries Theurian itself writes in the installation's config and state folders: the one list `uninstall`
removes, so a folder `THEURIAN_HOME` (or an XDG variable) shares with the user's own files loses only Theurian's.

Each name is its writer's constant; a temporary file a crashed write left beside one of them (`durable.temp_prefix`)
is that entry's too. The folder goes only once nothing else is left in it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from theurian import access_token, daemon_state, installation, registry
from theurian.durable import temp_prefix


def _config_names() -> frozenset[str]:
    registry_name = installation.REGISTRY_NAME
    return frozenset({registry_name, registry_name + registry.LOCK_SUFFIX, installation.INSTALLATION_CONFIG_NAME})


def _state_names() -> frozenset[str]:
    # Here, not at the top: these modules load DuckDB, which no other command that imports this one needs.
    from projection.review_digest import VERIFIED_DIR
    from projection.review_reuse import FILES_DIR

    return frozenset({installation.SECRET_NAME, access_token.TOKEN_NAME, daemon_state.RECORD_NAME,
                      daemon_state.LOG_NAME, daemon_state.ROTATED_LOG_NAME, VERIFIED_DIR, FILES_DIR})


@dataclass(frozen=True)
class FolderContents:
    """One installation folder as uninstall finds it: Theurian's entries in it, and everything else (kept)."""

    folder: Path
    theurians: tuple[str, ...]
    others: tuple[str, ...]


def installation_folders() -> list[FolderContents]:
    """The config and state folders that exist, each split into Theurian's entries and the rest, sorted by name."""
    found = []
    for folder, names in ((installation.config_dir(), _config_names()), (installation.state_dir(), _state_names())):
        if not (folder.exists() or folder.is_symlink()):
            continue
        entries = sorted(entry.name for entry in folder.iterdir())
        ours = tuple(name for name in entries if _is_theurians(name, names))
        found.append(FolderContents(folder, ours, tuple(name for name in entries if name not in ours)))
    return found


def _is_theurians(name: str, names: frozenset[str]) -> bool:
    return name in names or any(name.startswith(temp_prefix(known)) for known in names)


def remove_theurians(contents: FolderContents) -> bool:
    """Remove Theurian's entries in the folder, then the folder if that left it empty; whether it went.

    A link is removed, never followed: a dotfile manager links the installation's files from where it keeps them,
    and those are its own."""
    for name in contents.theurians:
        entry = contents.folder / name
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)  # a folder of records only Theurian writes (one per verified store)
        else:
            entry.unlink(missing_ok=True)
    if contents.others:
        return False
    if contents.folder.is_symlink():
        contents.folder.unlink()
    else:
        contents.folder.rmdir()
    return True
