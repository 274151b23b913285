"""An index whose dense channel cannot answer, end to end: the installation config's `embedding_model` naming a
folder that is no model, or a model whose weights changed since the index was built. The real `theurian index
status` calls it degraded (exit 1, `ok` false) and says why with the cure, doctor's retrieval index row says the
same, and knowledge.search (the CLI, and a real daemon through the SDK client) still ranks with the word channels,
naming the missing ones in `retrieval.unavailableChannels`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy
from safetensors.numpy import save_file

from tests.knowledge.authoring import copy_sample
from tests.support.daemon import running_daemon
from tests.support.fake_model import FAKE_MATRIX, write_fake_model
from tests.support.installation import Installation
from tests.support.mcp_client import call_tools
from theurian.embedding import MODEL_MANIFEST

WORDS = ["lexical", "title", "trigram"]


def _indexed(installation: Installation, root: Path) -> Path:
    copy_sample(root)
    installation.cli_in_process("project", "register", str(root), "--id", "degraded")
    installation.cli_in_process("migrate", "apply", "--project", str(root))
    installation.cli_in_process("index", "build", "--project", str(root))
    return root


def _config(installation: Installation) -> Path:
    return installation.home / "config/config.toml"


def _status(installation: Installation, root: Path) -> tuple[int, dict[str, Any]]:
    result = installation.cli("index", "status", "--project", str(root), "--json")
    document = json.loads(result.stdout)
    assert document["ok"] is (result.returncode == 0)
    return result.returncode, document["summary"]


def test_a_broken_embedding_model_makes_index_status_degraded_and_search_says_it_ranked_without_dense(
        installation: Installation, tmp_path: Path) -> None:
    root = _indexed(installation, tmp_path / "project")
    assert _status(installation, root)[1]["state"] == "current"
    (installation.home / "config/models/broken").mkdir(parents=True)
    _config(installation).write_text('embedding_model = "models/broken"\n', encoding="utf-8")

    code, status = _status(installation, root)
    assert code == 1 and status["state"] == "degraded", status
    assert status["channels"] == WORDS
    assert status["unavailableChannels"] == [{"channel": "dense", "reason": "embedding-model-unavailable"}]
    assert status["reason"].startswith("the embedding model cannot be loaded: ")
    assert status["reason"].endswith(f"is not a model folder: it has no {MODEL_MANIFEST}")
    assert status["cure"].startswith(f"fix `embedding_model` in {_config(installation)}")
    described = installation.cli("index", "status", "--project", str(root))
    assert described.returncode == 1
    assert "degraded, knowledge.search ranks with lexical, title, trigram only: dense unavailable" in described.stdout
    doctor = json.loads(installation.cli("doctor", "--json").stdout)["summary"]["checks"]
    row = next(c for c in doctor if c["check"] == "degraded: retrieval index")
    model = next(c for c in doctor if c["check"] == "embedding model")
    assert row["level"] == "fail" and row["cure"] == model["cure"] and "degraded" in row["state"]

    searched = installation.cli("knowledge", "search", "auth", "--project", str(root), "--json")
    assert searched.returncode == 0, searched.stderr
    retrieval = json.loads(searched.stdout)["summary"]["retrieval"]
    assert retrieval["indexed"] is True and retrieval["channels"] == WORDS
    assert retrieval["unavailableChannels"] == status["unavailableChannels"]
    with running_daemon(installation) as daemon:
        search, capabilities = call_tools(daemon.mcp_url, [
            ("knowledge.search", {"projectId": "degraded", "query": "auth"}), ("system.capabilities", {})])
    served = search.valid("knowledge-search-response.schema.json")
    assert served["count"] >= 1 and served["retrieval"] == retrieval
    assert all("dense" not in hit["foundBy"] for hit in served["results"])
    offered = capabilities.valid("system-capabilities-response.schema.json")["knowledgeRetrieval"]
    assert offered["embeddingModel"] is None and offered["projects"][0]["channels"] == WORDS

    _config(installation).unlink()  # the cure named: the bundled model again, and no rebuild is needed
    code, status = _status(installation, root)
    assert (code, status["state"], status["unavailableChannels"], status["cure"]) == (0, "current", [], None)
    assert status["channels"] == [*WORDS, "dense"]


def test_model_weights_changed_since_the_build_make_the_index_degraded_until_it_is_rebuilt(
        installation: Installation, tmp_path: Path) -> None:
    model = write_fake_model(installation.home / "config/models/fake")
    _config(installation).parent.mkdir(parents=True, exist_ok=True)
    _config(installation).write_text('embedding_model = "models/fake"\n', encoding="utf-8")
    root = _indexed(installation, tmp_path / "project")
    assert _status(installation, root)[0] == 0
    save_file({"embedding.weight": numpy.flip(FAKE_MATRIX, axis=1).copy()}, str(model / "weights.safetensors"))

    code, status = _status(installation, root)
    assert code == 1 and status["state"] == "degraded", status
    assert status["unavailableChannels"] == [{"channel": "dense", "reason": "embedding-model-mismatch"}]
    assert status["reason"].startswith("its vectors were made by fake-3d (3 dimensions, weights sha256 ")
    assert status["cure"] == "`theurian index build`"
    searched = installation.cli("knowledge", "search", "lock", "--project", str(root), "--json")
    assert json.loads(searched.stdout)["summary"]["retrieval"]["unavailableChannels"] == status["unavailableChannels"]

    installation.cli("index", "build", "--project", str(root), check=True)
    assert _status(installation, root)[1]["state"] == "current"
