"""system.capabilities' knowledgeRetrieval: the channels this build ranks with, and per project what a search would
rank with right now — read from the pointers, so each case below changes one of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge.index import build_index
from knowledge.index_pointer import read_index_pointer
from serve.tools import registered_tools
from serve.tools.retrieval_capabilities import knowledge_retrieval
from tests.serve.knowledge_support import answer, build_sample, registered_copy
from tests.support.fake_model import write_fake_model
from theurian.embedding import DEFAULT_MODEL_NAME, load_model

ALL = ["lexical", "title", "trigram", "dense", "summary"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample(tmp_path_factory.mktemp("capabilities") / "sample")


def _project(response: dict[str, object], project_id: str) -> dict[str, object]:
    retrieval = response["knowledgeRetrieval"]
    assert isinstance(retrieval, dict)
    return next(p for p in retrieval["projects"] if p["projectId"] == project_id)


def test_capabilities_name_every_channel_the_model_and_each_project_s_index(built: Path, tmp_path: Path) -> None:
    plain = registered_copy(built, tmp_path / "plain", "plain")
    raptor = registered_copy(built, tmp_path / "raptor", "raptor")
    build_index(raptor, "internal", raptor=True)
    response = answer("system.capabilities", {})
    retrieval = response["knowledgeRetrieval"]
    assert retrieval["channels"] == ALL
    assert retrieval["embeddingModel"] == {"name": DEFAULT_MODEL_NAME, "dimension": 256}
    pointer = read_index_pointer(plain)
    assert pointer is not None
    assert _project(response, "plain") == {"projectId": "plain", "indexBuildId": pointer.build_id,
                                           "channels": ALL[:4]}
    assert _project(response, "raptor")["channels"] == ALL


def test_a_project_whose_index_cannot_answer_has_no_channels(built: Path, tmp_path: Path) -> None:
    registered_copy(built, tmp_path / "other-ceiling", "other-ceiling")
    gone = registered_copy(built, tmp_path / "no-index", "no-index")
    (gone / ".theurian/state/knowledge-index.json").unlink()
    response = answer("system.capabilities", {}, ceiling="public")
    assert _project(response, "other-ceiling") == {"projectId": "other-ceiling", "indexBuildId": None, "channels": []}
    assert _project(response, "no-index")["channels"] == []


def test_an_index_another_model_built_offers_its_word_channels_only(built: Path, tmp_path: Path) -> None:
    other = registered_copy(built, tmp_path / "other-model", "other-model")
    build_index(other, "internal", model=load_model(write_fake_model(tmp_path / "model")))
    assert _project(answer("system.capabilities", {}), "other-model")["channels"] == ALL[:3]


def test_without_knowledge_search_nothing_is_offered() -> None:
    tools = [tool for tool in registered_tools() if tool.name != "knowledge.search"]
    assert knowledge_retrieval(tools, "internal") == {"channels": [], "embeddingModel": None, "projects": []}
