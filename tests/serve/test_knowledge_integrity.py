"""The corruption sweep: a sentinel in each counted column sets the present-only integrity key, and the remedy's
commands clear what the contract says they clear. Every damage is done to a real copy of a built state."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from knowledge.apply import apply_migrations
from knowledge.errors import INTEGRITY_REMEDY
from knowledge.index import build_index
from knowledge.integrity import INTEGRITY_KEY
from knowledge.state import POINTER_NAME
from knowledge.state_stamp import stamp_state
from tests.knowledge.authoring import copy_sample
from tests.serve.knowledge_support import answer, refusal, registered_copy
from theurian.installation import build_stamp_secret

SENTINEL = "\x00damaged"
STATE = Path(".theurian/state")
Damage = Callable[[sqlite3.Connection], None]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_sample(tmp_path_factory.mktemp("integrity") / "sample")
    apply_migrations(root)
    build_index(root, "internal")
    return root


@pytest.fixture
def demo(built: Path, tmp_path: Path) -> Path:
    return registered_copy(built, tmp_path / "demo")


def damage(root: Path, sql: str, *args: object) -> None:
    pointer = json.loads((root / STATE / POINTER_NAME).read_text(encoding="utf-8"))
    with sqlite3.connect(root / STATE / pointer["stateFile"]) as connection:
        assert connection.execute(sql, args).rowcount >= 1


def three_answers(item_id: str = "architecture.auth-policy") -> tuple[dict, dict, dict]:  # type: ignore[type-arg]
    search = answer("knowledge.search", {"projectId": "demo", "query": "gateway"})
    status = answer("knowledge.status", {"projectId": "demo"})
    get = answer("knowledge.get", {"projectId": "demo", "itemId": item_id})
    return search, status, get


def test_a_healthy_state_carries_no_integrity_key_on_any_tool(demo: Path) -> None:
    assert all("integrity" not in response for response in three_answers())


def test_a_sentinel_in_migration_history_project_id_sets_the_key_and_apply_clears_it(demo: Path) -> None:
    damage(demo, "UPDATE migration_history SET project_id = ? WHERE position = 0", SENTINEL)
    search, status, get = three_answers()
    assert search["integrity"] == status["integrity"] == get["integrity"] == INTEGRITY_KEY
    assert status["appliedMigrations"] == 2  # the pointer's number: it does not shrink with the rows
    apply_migrations(demo)
    assert all("integrity" not in response for response in three_answers())


def test_a_sentinel_in_knowledge_items_project_id_shrinks_the_answers_and_sets_the_key(demo: Path) -> None:
    damage(demo, "UPDATE knowledge_items SET project_id = ? WHERE item_id = 'architecture.auth-policy'", SENTINEL)
    search = answer("knowledge.search", {"projectId": "demo", "query": "gateway"})
    assert search["count"] == 0 and search["results"] == [] and search["integrity"] == INTEGRITY_KEY
    status = answer("knowledge.status", {"projectId": "demo"})
    assert status["itemCount"] == 1 and status["integrity"] == INTEGRITY_KEY
    text = refusal("knowledge.get", {"projectId": "demo", "itemId": "architecture.auth-policy"})
    assert text == ("Project 'demo' could not be fully read: its derived state disagrees with its own records "
                    f"about what it holds. {INTEGRITY_REMEDY}")
    apply_migrations(demo)
    assert answer("knowledge.status", {"projectId": "demo"})["itemCount"] == 2


def test_an_absent_item_over_a_healthy_state_is_refused_as_absence(demo: Path) -> None:
    assert refusal("knowledge.get", {"projectId": "demo", "itemId": "no.such"}) == (
        "No knowledge item 'no.such' is available in project 'demo'.")


def test_an_absent_item_over_a_damaged_state_is_refused_as_damage_not_absence(demo: Path) -> None:
    # The other direction of the pair: over detected damage, even an id that was never there is not "absent".
    damage(demo, "UPDATE knowledge_items SET project_id = ? WHERE item_id = 'architecture.auth-policy'", SENTINEL)
    assert refusal("knowledge.get", {"projectId": "demo", "itemId": "no.such"}) == (
        "Project 'demo' could not be fully read: its derived state disagrees with its own records about what it "
        f"holds. {INTEGRITY_REMEDY}")


def test_a_corrupt_status_reaches_each_tool_as_the_contract_describes(demo: Path) -> None:
    damage(demo, "UPDATE knowledge_items SET status = ? WHERE item_id = 'architecture.auth-policy'", SENTINEL)
    status = answer("knowledge.status", {"projectId": "demo"})
    assert status["itemCount"] == 1 and status["integrity"] == INTEGRITY_KEY
    ranked = refusal("knowledge.search", {"projectId": "demo", "query": "gateway"})
    assert "delete .theurian/state/ and run `theurian migrate apply`" in ranked
    assert "delete .theurian/state/" in refusal("knowledge.get", {"projectId": "demo",
                                                                   "itemId": "architecture.auth-policy"})
    (demo / STATE / "knowledge-index.json").unlink()
    fallback = answer("knowledge.search", {"projectId": "demo", "query": "gateway"})
    assert fallback["count"] == 0 and fallback["integrity"] == INTEGRITY_KEY


def test_a_surplus_row_and_a_lost_integrity_record_are_damage_too(demo: Path) -> None:
    damage(demo, "INSERT INTO knowledge_items SELECT project_id, 'planted.item', kind, namespace, owner, status, "
                 "trust_level, sensitivity, valid_from, valid_to, valid_from_utc, valid_to_utc, labels, scope_paths, "
                 "current_revision_id, status_reason, superseded_by FROM knowledge_items "
                 "WHERE item_id = 'testing.flaky-retries'")
    assert answer("knowledge.status", {"projectId": "demo"})["integrity"] == INTEGRITY_KEY
    apply_migrations(demo)  # this build's apply rebuilds from the migrations, which cures a surplus row too
    assert "integrity" not in answer("knowledge.status", {"projectId": "demo"})
    damage(demo, "DELETE FROM project_integrity")
    assert answer("knowledge.status", {"projectId": "demo"})["integrity"] == INTEGRITY_KEY


def test_a_pointer_that_over_counts_sets_the_key_and_apply_clears_it(demo: Path) -> None:
    path = demo / STATE / POINTER_NAME
    pointer = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(pointer | {"migrationCount": 3}), encoding="utf-8")
    status = answer("knowledge.status", {"projectId": "demo"})
    assert status["appliedMigrations"] == 3 and status["integrity"] == INTEGRITY_KEY
    apply_migrations(demo)
    status = answer("knowledge.status", {"projectId": "demo"})
    assert status["appliedMigrations"] == 2 and "integrity" not in status


DAMAGE_REFUSAL = ("Project 'demo' could not be fully read: its derived state disagrees with its own records about "
                  f"what it holds. {INTEGRITY_REMEDY}")


def test_a_sentinel_in_item_id_that_no_count_sees_is_refused_by_the_stamp(demo: Path) -> None:
    # Neither count moves (the row keeps its project and status): this was the contract's one undetected
    # under-report; the stamp's row digest now refuses it on every tool, and the integrity cure cures it.
    damage(demo, "UPDATE knowledge_items SET item_id = ? WHERE item_id = 'architecture.auth-policy'", SENTINEL)
    assert refusal("knowledge.status", {"projectId": "demo"}) == DAMAGE_REFUSAL
    assert refusal("knowledge.search", {"projectId": "demo", "query": "gateway"}) == DAMAGE_REFUSAL
    apply_migrations(demo)
    assert answer("knowledge.status", {"projectId": "demo"})["itemCount"] == 2


def _restamped(root: Path) -> None:
    """What a build that wrote the damage itself would leave: the damaged rows under this installation's stamp."""
    pointer = json.loads((root / STATE / POINTER_NAME).read_text(encoding="utf-8"))
    with sqlite3.connect(root / STATE / pointer["stateFile"]) as connection:
        connection.execute("DELETE FROM build_stamp")
        stamp_state(connection, build_stamp_secret())


def test_a_revision_pointer_naming_another_items_revision_is_refused_not_served(demo: Path) -> None:
    damage(demo, "UPDATE knowledge_items SET current_revision_id = '01K1A0000000000000000000R2' "
                 "WHERE item_id = 'architecture.auth-policy'")
    assert refusal("knowledge.get", {"projectId": "demo", "itemId": "architecture.auth-policy"}) == DAMAGE_REFUSAL
    _restamped(demo)  # past the stamp, the item -> revision consistency guard still refuses it
    text = refusal("knowledge.get", {"projectId": "demo", "itemId": "architecture.auth-policy"})
    assert "names a revision of another item" in text


def test_following_the_remedy_token_by_token_restores_ranked_retrieval(demo: Path) -> None:
    damage(demo, "UPDATE knowledge_items SET project_id = ? WHERE item_id = 'testing.flaky-retries'", SENTINEL)
    shutil.rmtree(demo / STATE)
    apply_migrations(demo)
    search = answer("knowledge.search", {"projectId": "demo", "query": "gateway"})
    assert "integrity" not in search
    assert search["retrieval"]["indexed"] is False and search["retrieval"]["fallbackReason"] == "no-index"
    build_index(demo, "internal")
    assert answer("knowledge.search", {"projectId": "demo", "query": "gateway"})["retrieval"]["indexed"] is True
