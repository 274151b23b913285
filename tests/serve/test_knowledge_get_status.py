"""knowledge.get and knowledge.status through the real dispatcher, disclosure and absence included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from knowledge import CANONICAL_SCHEMA_VERSION
from knowledge.apply import apply_migrations
from tests.knowledge.authoring import MigrationWriter
from tests.serve.knowledge_support import WIDGETS, answer, build_sample, refusal, registered_copy
from theurian import registry
from theurian.project import init_project
from theurian.safety import SAFETY_TRIPLE


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample(tmp_path_factory.mktemp("knowledge") / "sample", index=False)


@pytest.fixture
def demo(built: Path, tmp_path: Path) -> Path:
    return registered_copy(built, tmp_path / "demo")


def get(item_id: str, *, ceiling: str = "internal") -> dict[str, object]:
    return answer("knowledge.get", {"projectId": "demo", "itemId": item_id}, ceiling=ceiling)


def test_get_returns_the_current_revision_with_provenance(demo: Path) -> None:
    item = get("architecture.auth-policy")
    assert item["revisionId"] == "01K1B0000000000000000000R5" and "ten minutes" in str(item["body"])
    assert item["provenance"] == {
        "migrationId": "01K1B0000000000000000000M2", "contentFile": "../knowledge/architecture/auth-policy-v2.md",
        "contentSha256": item["provenance"]["contentSha256"],  # type: ignore[index]
        "stateHash": answer("knowledge.status", {"projectId": "demo"})["stateHash"]}
    assert item["aliases"] == ["auth-policy"] and item["labels"] == ["auth", "gateway", "jwt"]
    assert item["evidence"][0]["confidence"] == 0.9  # type: ignore[index]
    assert {k: item[k] for k in SAFETY_TRIPLE} == SAFETY_TRIPLE
    assert "integrity" not in item


def test_get_computes_validity_against_now(demo: Path) -> None:
    assert get("incident.old-outage")["freshness"]["isWithinValidity"] is False  # type: ignore[index]


def test_a_relation_to_a_withheld_item_is_not_shown(demo: Path) -> None:
    assert get("architecture.auth-policy")["relations"] == []
    relations = get("architecture.auth-policy", ceiling="confidential")["relations"]
    assert relations == [{"sourceItemId": "security.token-rotation", "relationType": "refines",
                          "targetItemId": "architecture.auth-policy", "note": None}]


@pytest.mark.parametrize("item_id", ["security.token-rotation", "operations.legacy-deploy", "no.such-item"],
                         ids=["withheld", "retired", "absent"])
def test_a_withheld_a_retired_and_an_absent_id_get_the_same_message(demo: Path, item_id: str) -> None:
    assert refusal("knowledge.get", {"projectId": "demo", "itemId": item_id}) == (
        f"No knowledge item {item_id!r} is available in project 'demo'.")


def test_an_item_above_a_lower_ceiling_is_refused_like_an_absent_one(demo: Path) -> None:
    text = refusal("knowledge.get", {"projectId": "demo", "itemId": "architecture.auth-policy"}, ceiling="public")
    assert text == "No knowledge item 'architecture.auth-policy' is available in project 'demo'."


def test_status_has_six_keys_and_counts_only_what_the_ceiling_may_see(demo: Path) -> None:
    status = answer("knowledge.status", {"projectId": "demo"})
    # internal: auth-policy, flaky-retries, old-outage, the widgets (approved); cache-policy (draft).
    assert status["itemsByStatus"] == {"approved": 3 + WIDGETS, "draft": 1}
    assert status["itemCount"] == 4 + WIDGETS
    assert status["appliedMigrations"] == 3 and status["schemaVersion"] == CANONICAL_SCHEMA_VERSION
    assert set(status) == {"projectId", "stateHash", "itemCount", "itemsByStatus", "appliedMigrations",
                           "schemaVersion"}
    public = answer("knowledge.status", {"projectId": "demo"}, ceiling="public")
    assert public["itemsByStatus"] == {"approved": 2 + WIDGETS, "draft": 1}
    restricted = answer("knowledge.status", {"projectId": "demo"}, ceiling="restricted")
    assert restricted["itemCount"] == 5 + WIDGETS  # the confidential runbook; never the deprecated one
    assert public["stateHash"] == status["stateHash"] == restricted["stateHash"]


def test_a_project_whose_items_are_all_retired_answers_empty_and_zero(installation: object,
                                                                     tmp_path: Path) -> None:
    root = tmp_path / "retired"
    root.mkdir()
    init_project(root)
    registry.register(root, "retired")
    writer = MigrationWriter(root)
    writer.item("decision.a", "A.", status="approved")
    writer.item("decision.b", "B.", status="rejected")
    writer.item("decision.c", "C.", status="draft")
    writer.op(op="deprecateItem", itemId="decision.a", reason="gone")
    writer.op(op="deprecateItem", itemId="decision.c", supersededBy="decision.a")
    writer.write("retired")
    apply_migrations(root)
    status = answer("knowledge.status", {"projectId": "retired"})
    assert status["itemsByStatus"] == {} and status["itemCount"] == 0 and status["appliedMigrations"] == 1
    assert "integrity" not in status


def test_a_project_with_no_built_state_is_refused_naming_migrate_apply(installation: object,
                                                                       tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    init_project(root)
    registry.register(root, "fresh")
    for name, arguments in [("knowledge.status", {}), ("knowledge.get", {"itemId": "x"}),
                            ("knowledge.search", {"query": "x"})]:
        text = refusal(name, {"projectId": "fresh", **arguments})
        assert text == "project 'fresh' has no built knowledge state; run `theurian migrate apply` in its folder"


def test_an_unregistered_project_is_refused_with_its_code(installation: object) -> None:
    for name, arguments in [("knowledge.status", {}), ("knowledge.get", {"itemId": "x"}),
                            ("knowledge.search", {"query": "x"})]:
        envelope = json.loads(refusal(name, {"projectId": "nowhere", **arguments}))["error"]
        assert (envelope["code"], envelope["details"]) == ("PROJECT_NOT_REGISTERED", {"projectId": "nowhere"})


def test_a_migration_of_only_withheld_items_moves_the_hash_and_the_migration_count_not_the_counts(
        demo: Path) -> None:
    before = answer("knowledge.status", {"projectId": "demo"})
    writer = MigrationWriter(demo, created_at="2026-10-01T00:00:00Z")
    writer.item("security.secret-plan", "Classified.", sensitivity="restricted", kind="security")
    writer.write("withheld")
    apply_migrations(demo)
    after = answer("knowledge.status", {"projectId": "demo"})
    assert after["stateHash"] != before["stateHash"] and after["appliedMigrations"] == 4
    assert (after["itemCount"], after["itemsByStatus"]) == (before["itemCount"], before["itemsByStatus"])
