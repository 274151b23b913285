"""A refusal built from a schema check names the place, the constraint and the value's JSON type or length, and
never repeats the value: knowledge.generateMigrationDraft and knowledge.proposeChange check what they draft
against the migration schema (`knowledge.migrations.validate_document`), whose `jsonschema` message reprinted the
value (a Python repr, cut at ~450 characters with no marker)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from serve.errors import ToolRefusal
from serve.local_call import call_locally
from serve.tooling import ServeSettings
from tests.knowledge.proposal_support import PROJECT_ID, Shop, new_shop

SETTINGS = ServeSettings(disclosure_ceiling="internal")
DRAFT = "knowledge.generateMigrationDraft"


@pytest.fixture
def shop(tmp_path: Path) -> Shop:
    return new_shop(tmp_path / "shop")


def _refusal(tool: str, arguments: dict[str, Any]) -> str:
    with pytest.raises(ToolRefusal) as refused:
        call_locally(tool, arguments, SETTINGS)
    return refused.value.message


def _draft(shop: Shop, operation: dict[str, Any]) -> str:
    return _refusal(DRAFT, {"projectId": PROJECT_ID, "author": "a", "description": "d", "operations": [operation]})


def test_a_nested_object_where_a_string_belongs_is_named_by_its_json_type(shop: Shop) -> None:
    text = _draft(shop, {"op": "addAlias", "itemId": shop.item_id, "alias": {"a": [[[1]]]}})
    assert text.endswith("invalid at operation 0: `alias` must be of type string; an object of 1 key was sent; "
                         "nothing was changed")
    assert "[[" not in text and "{" not in text and "'a'" not in text


def test_a_million_character_value_is_named_by_its_length_and_never_repeated(shop: Shop) -> None:
    text = _draft(shop, {"op": "addAlias", "itemId": shop.item_id, "alias": "z" * 1_000_000})
    assert "invalid at operation 0: `alias` " in text and "a string of 1000000 characters was sent" in text
    assert "zz" not in text and len(text) < 300


def test_a_value_failing_a_pattern_names_the_pattern_and_not_the_value(shop: Shop) -> None:
    text = _draft(shop, {"op": "addAlias", "itemId": "SECRET value!", "alias": "lo"})
    assert "`itemId` does not match the pattern ^" in text and "a string of 13 characters was sent" in text
    assert "SECRET" not in text


def test_a_key_the_schema_does_not_allow_is_refused_without_naming_it(shop: Shop) -> None:
    text = _draft(shop, {"op": "addAlias", "itemId": shop.item_id, "alias": "lo", "SECRET-key": 1})
    assert text.endswith("invalid at operation 0: the operation holds a key the schema does not allow; nothing was "
                         "changed")
    assert "SECRET" not in text
