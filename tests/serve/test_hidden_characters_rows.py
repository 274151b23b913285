"""hiddenCharacters on every row of review.search, review.findSimilar, review.findings, knowledge.search and
knowledge.get: each class named when any text field holds it, empty when none, and the served values exactly the
stored ones."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import schemas
from knowledge.apply import apply_migrations
from knowledge.index import build_index
from projection.findings_build import build_findings_store
from serve.dispatch import Dispatcher
from serve.tooling import ServeSettings
from serve.tools import registered_tools
from tests.knowledge.authoring import MigrationWriter
from tests.projection.git_fixture import T0, Planned, message, trailer, write_history
from tests.projection.review_records import pull_request, review, thread
from tests.serve.test_review_search import built_project
from theurian import registry
from theurian.hidden_characters import BIDI_CONTROL, CLASSES, OTHER_FORMAT, TAG_CHARACTER, ZERO_WIDTH
from theurian.project import init_project

# One text per class, each hiding its character inside an ordinary word.
HIDDEN = {BIDI_CONTROL: "admin\u202euser", ZERO_WIDTH: "lo\u200bck", TAG_CHARACTER: "ok\U000e0049\U000e0047",
          OTHER_FORMAT: "re\u00adad"}


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = asyncio.run(Dispatcher(registered_tools(), ServeSettings("internal")).call(name, arguments))
    assert not result["isError"], result["content"][0]["text"]
    structured: dict[str, Any] = result["structuredContent"]
    schema = {"review.search": "review-search-response.schema.json",
              "review.findings": "review-findings-response.schema.json",
              "review.findSimilar": "review-find-similar-response.schema.json",
              "review.listConcerns": "review-list-concerns-response.schema.json",
              "knowledge.search": "knowledge-search-response.schema.json",
              "knowledge.get": "knowledge-get-response.schema.json"}[name]
    jsonschema.Draft202012Validator(schemas.load("mcp", schema)).validate(structured)
    return structured


@pytest.mark.parametrize("name", CLASSES)
def test_review_search_names_each_class_in_whichever_field_holds_it(tmp_path: Path, name: str) -> None:
    text = HIDDEN[name]
    built_project(tmp_path / "p", "p", [
        pull_request("Acme/Api", 1, "PR_title", title=text),
        review("Acme/Api", 2, "PRR_body", body=text),
        thread("Acme/Api", 3, "PRRT_path", path=f"src/{text}.py"),
        pull_request("Acme/Api", 4, "PR_plain", title="plain"),
    ])
    rows = {r["recordKey"]: r for r in _call("review.search", {"projectId": "p"})["records"]}
    assert {key: row["hiddenCharacters"] for key, row in rows.items()} == {
        "PR_title": [name], "PRR_body": [name], "PRRT_path": [name], "PR_plain": []}
    assert rows["PRRT_path"]["filePath"] == f"src/{text}.py"  # served exactly as stored
    assert rows["PRR_body"]["excerpt"] == text


def test_review_search_lists_every_class_a_row_holds_in_order(tmp_path: Path) -> None:
    everything = " ".join(reversed(HIDDEN.values()))
    built_project(tmp_path / "p", "p", [thread("Acme/Api", 3, "PRRT_all", bodies=(everything,))])
    (row,) = _call("review.search", {"projectId": "p"})["records"]
    assert row["hiddenCharacters"] == list(CLASSES)


def test_review_findings_names_the_classes_its_finding_text_holds(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_history(root, [Planned(T0, message("findings", [
        trailer("security", "HIGH", HIDDEN[TAG_CHARACTER] + HIDDEN[BIDI_CONTROL]),
        trailer("code", "LOW", "plain text")]))])
    init_project(root)
    registry.register(root, "f")
    build_findings_store(root)
    findings = _call("review.findings", {"projectId": "f"})["findings"]
    assert {f["findingText"]: f["hiddenCharacters"] for f in findings} == {
        HIDDEN[TAG_CHARACTER] + HIDDEN[BIDI_CONTROL]: [BIDI_CONTROL, TAG_CHARACTER], "plain text": []}


@pytest.fixture
def knowledge(tmp_path: Path) -> Path:
    root = tmp_path / "k"
    root.mkdir()
    init_project(root)
    writer = MigrationWriter(root, created_at="2026-09-01T00:00:00Z")
    writer.item("convention.hidden", f"Widgets {HIDDEN[ZERO_WIDTH]} here.", title=f"Widgets {HIDDEN[OTHER_FORMAT]}",
                sensitivity="public")
    writer.item("convention.plain", "Widgets are plain.", title="Plain widgets", sensitivity="public")
    writer.write("hidden")
    apply_migrations(root)
    build_index(root, "internal")
    registry.register(root, "k")
    return root


def test_knowledge_search_and_get_name_the_classes_of_title_and_body(knowledge: Path) -> None:
    hits = _call("knowledge.search", {"projectId": "k", "query": "widgets"})["results"]
    assert {h["itemId"]: h["hiddenCharacters"] for h in hits} == {
        "convention.hidden": [ZERO_WIDTH, OTHER_FORMAT], "convention.plain": []}
    item = _call("knowledge.get", {"projectId": "k", "itemId": "convention.hidden"})
    assert item["hiddenCharacters"] == [ZERO_WIDTH, OTHER_FORMAT]
    assert item["body"] == f"Widgets {HIDDEN[ZERO_WIDTH]} here."
    assert _call("knowledge.get", {"projectId": "k", "itemId": "convention.plain"})["hiddenCharacters"] == []


def test_knowledge_get_names_a_class_only_its_body_holds(knowledge: Path) -> None:
    # The search excerpt may cut the body; get serves it whole, and its label covers all of it.
    item = _call("knowledge.get", {"projectId": "k", "itemId": "convention.hidden"})
    assert ZERO_WIDTH in item["hiddenCharacters"] and "\u200b" in item["body"]


@pytest.mark.parametrize("name", CLASSES)
def test_review_find_similar_names_each_class_held_by_the_comment_it_found(tmp_path: Path, name: str) -> None:
    text = HIDDEN[name]
    built_project(tmp_path / "p", "p", [
        thread("Acme/Api", 1, "PRRT_hidden", path="ledger/transfer.py", bodies=(
            f"Please always take the locks in the same order everywhere; otherwise two threads can {text} deadlock.",)),
        thread("Acme/Api", 2, "PRRT_plain", path="ledger/other.py", bodies=(
            "Always acquire the mutexes in one fixed order, or two workers can deadlock each other.",)),
    ])
    answer = _call("review.findSimilar", {"projectId": "p", "situation": "lock ordering can deadlock two threads"})
    rows = {r["recordKey"]: r for r in answer["records"]}
    assert {key: row["hiddenCharacters"] for key, row in rows.items()} == {"PRRT_hidden": [name], "PRRT_plain": []}
    assert text in rows["PRRT_hidden"]["excerpt"]  # served exactly as stored


@pytest.mark.parametrize("name", CLASSES)
def test_review_list_concerns_names_each_class_its_representative_text_holds(tmp_path: Path, name: str) -> None:
    text = (f"Please always take the two {HIDDEN[name]} guards in the same order everywhere, otherwise these "
            "threads can deadlock waiting on each other.")
    built_project(tmp_path / "p", "p", [thread("Acme/Api", number, f"PRRT_{number}", bodies=(text,))
                                        for number in (1, 2, 3)])
    [row] = _call("review.listConcerns", {"projectId": "p"})["concerns"]
    assert row["hiddenCharacters"] == [name] and HIDDEN[name] in row["excerpt"]
