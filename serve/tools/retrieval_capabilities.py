"""system.capabilities' `knowledgeRetrieval`: which ranked retrieval knowledge.search has, overall and per project.

`channels` is every channel this build can rank with (empty when knowledge.search is not registered);
`embeddingModel` the model this daemon embeds queries with (null when it cannot be loaded: dense and summary are
then offered nowhere). Per project, `channels` is what the project's published index offers a search right now —
built from the active state under this daemon's disclosure ceiling, `dense` and `summary` only when it was built by
this daemon's model — and empty when a search would fall back to the substring path. An index is advertised only
once it passes the checks a search makes before it ranks: the state opened and verified (`knowledge.reading`), the
index's stamp and rows verified (`knowledge.index.open_index`) — each once per file identity in the daemon's
verify-once cache, so a call costs a stat, an open and a read of `meta` per project after the first. A forged or
damaged index is offered nowhere here, as a search refuses it (`fallbackReason: index-unreadable`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from knowledge.fusion import CHANNEL_ORDER
from knowledge.index import open_index
from knowledge.index_pointer import IndexPointer, read_index_pointer
from knowledge.reading import open_state
from serve.tooling import Tool
from theurian import registry
from theurian.embedding import ModelIdentity, load_model
from theurian.errors import ConfigError, RegistryError, TheurianError
from theurian.project import Project
from theurian.stamped_store import VerifiedStores


def knowledge_retrieval(tools: Sequence[Tool], ceiling: str, stores: VerifiedStores | None = None) -> dict[str, Any]:
    """`knowledgeRetrieval`; `stores` is the daemon's verify-once cache (without one, every index is verified in
    full on this call)."""
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
        pointer = _current_index(Project(registration.project_id, registration.root), ceiling, stores)
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


def _current_index(project: Project, ceiling: str, stores: VerifiedStores | None) -> IndexPointer | None:
    """The published index a search would rank with: built from the active state under this ceiling, the state
    and the index both verified as a search verifies them; None when a search would answer from substring or
    refuse."""
    try:
        with open_state(project, ceiling, stores) as reading:
            pointer = read_index_pointer(project.root)
            if pointer is None or pointer.state_hash != reading.pointer.state_hash:
                return None
            if pointer.disclosure_ceiling != ceiling:
                return None
            index = open_index(project.root, pointer, stores)
    except (TheurianError, OSError):  # a project whose state cannot be read has no ranked retrieval here
        return None
    if index is None:
        return None
    index.close()
    return pointer


def _offered(pointer: IndexPointer, model: ModelIdentity | None) -> list[str]:
    semantic = model is not None and pointer.model == model
    return [c for c in pointer.channels if semantic or c not in ("dense", "summary")]
