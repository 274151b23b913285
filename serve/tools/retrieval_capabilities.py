"""system.capabilities' `knowledgeRetrieval`: which ranked retrieval knowledge.search has, overall and per project.

`channels` is every channel this build can rank with (empty when knowledge.search is not registered);
`embeddingModel` the model this daemon embeds queries with (null when it cannot be loaded: dense and summary are
then offered nowhere). Per project, `channels` is what the project's published index offers a search right now —
built from the active state under this daemon's disclosure ceiling, `dense` and `summary` only when it was built by
this daemon's model — and empty when a search would fall back to the substring path. It reads the two pointers
only; damage inside an index file shows in the search's own `retrieval.channels` and `fallbackReason`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from knowledge.fusion import CHANNEL_ORDER
from knowledge.index_pointer import IndexPointer, read_index_pointer
from knowledge.state import read_pointer
from serve.tooling import Tool
from theurian import registry
from theurian.embedding import ModelIdentity, load_model
from theurian.errors import ConfigError, RegistryError, TheurianError


def knowledge_retrieval(tools: Sequence[Tool], ceiling: str) -> dict[str, Any]:
    if not any(tool.name == "knowledge.search" for tool in tools):
        return {"channels": [], "embeddingModel": None, "projects": []}
    try:
        model: ModelIdentity | None = load_model().identity
    except ConfigError:
        model = None
    try:
        registrations = registry.read().registrations
    except RegistryError:
        registrations = ()  # project.list reports why
    projects = []
    for registration in sorted(registrations, key=lambda r: r.project_id):
        pointer = _current_index(registration.root, ceiling)
        projects.append({
            "projectId": registration.project_id,
            "indexBuildId": pointer.build_id if pointer else None,
            "channels": _offered(pointer, model) if pointer else [],
        })
    return {
        "channels": list(CHANNEL_ORDER if model else (c for c in CHANNEL_ORDER if c not in ("dense", "summary"))),
        "embeddingModel": None if model is None else {"name": model.name, "dimension": model.dimension},
        "projects": projects,
    }


def _current_index(root: Path, ceiling: str) -> IndexPointer | None:
    """The published index a search would rank with: built from the active state, under this ceiling."""
    try:
        state = read_pointer(root)
        index = read_index_pointer(root)
    except (TheurianError, OSError):  # a project whose state cannot be read has no ranked retrieval here
        return None
    if state is None or index is None or index.state_hash != state.state_hash or index.disclosure_ceiling != ceiling:
        return None
    return index


def _offered(pointer: IndexPointer, model: ModelIdentity | None) -> list[str]:
    semantic = model is not None and pointer.model == model
    return [c for c in pointer.channels if semantic or c not in ("dense", "summary")]
