"""A refusal built from a schema check names the place, the constraint and the value's JSON type or length, and
never repeats the value: knowledge.generateMigrationDraft and knowledge.proposeChange check what they draft
against the migration schema (`knowledge.migrations.validate_document`), whose `jsonschema` message reprinted the
value (a Python repr, cut at ~450 characters with no marker)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import schemas
from knowledge.candidate import ITEM_ID
from knowledge.drafts import MAX_ITEM_ID_CHARS, ChangeRequest, propose_change
from knowledge.errors import ItemNotAvailableError
from knowledge.proposals import V1_DRAFT_KINDS, DraftFacade
from serve.errors import ToolRefusal
from serve.local_call import call_locally
from serve.tooling import ServeSettings
from tests.knowledge.proposal_support import PROJECT_ID, Shop, new_shop
from tests.support.schema_values import schema_bound
from theurian.project import resolve_project
from theurian.text import MAX_SHOWN_CHARS

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
    assert "`itemId` does not match the pattern `^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$`; a string of 13 characters " \
           "was sent; nothing was changed" in text
    assert "SECRET" not in text


def test_a_key_the_schema_does_not_allow_is_named_escaped_and_its_value_is_not(shop: Shop) -> None:
    text = _draft(shop, {"op": "addAlias", "itemId": shop.item_id, "alias": "lo", "itemID\u202e": "SECRET"})
    assert text.endswith("invalid at operation 0: the key `itemID\\u202e` is not allowed in the operation; nothing "
                         "was changed")
    assert "SECRET" not in text and "\u202e" not in text


def test_an_overlong_key_the_schema_does_not_allow_is_described_by_its_length(shop: Shop) -> None:
    text = _draft(shop, {"op": "addAlias", "itemId": shop.item_id, "alias": "lo", "k" * 81: 1, "k" * 80: 1})
    assert text.endswith(f"the keys `{'k' * 80}`, (a key of 81 characters) are not allowed in the operation; nothing "
                         "was changed")


ANCHOR = {"provider": "git", "sourceUri": "https://example.test/x"}


@pytest.mark.parametrize(("anchor", "confidence", "fault"), [
    ({"provider": "git"}, 0.5, "the required key `sourceUri` is missing from `anchor`"),
    ({**ANCHOR, "lineStart": 0}, 0.5, "`anchor.lineStart` violates minimum 1"),
    ({**ANCHOR, "commitSha": "SECRET"}, 0.5,
     "`anchor.commitSha` does not match the pattern `^[0-9a-f]{4,64}$`; a string of 6 characters was sent"),
    ({**ANCHOR, "provider": ""}, 0.5, "`anchor.provider` violates minLength 1; a string of 0 characters was sent"),
    ({**ANCHOR, "SECRET": 1}, 0.5, "the key `SECRET` is not allowed in `anchor`"),
    (ANCHOR, 1.5, "`confidence` violates maximum 1"),
    (ANCHOR, "SECRET", "`confidence` must be of type number; a string of 6 characters was sent"),
])
def test_each_constraint_of_a_nested_operation_is_named_at_its_place(
        shop: Shop, anchor: dict[str, Any], confidence: Any, fault: str) -> None:
    text = _draft(shop, {"op": "addEvidence", "itemId": shop.item_id, "anchor": anchor, "description": "d",
                         "confidence": confidence})
    assert text.endswith(f"invalid at operation 0: {fault}; nothing was changed")
    assert text.count("SECRET") == fault.count("SECRET")  # only a key is ever named; "SECRET" as a value never


@pytest.mark.parametrize("length", [1, MAX_SHOWN_CHARS + 1, 120, MAX_ITEM_ID_CHARS])
def test_propose_change_quotes_an_unknown_item_id_exactly_as_knowledge_get_does(shop: Shop, length: int) -> None:
    """proposeChange answered an id of 120 characters with "No knowledge item '(an id of 120 characters)'…": its
    description quoted as if it were the id, where knowledge.get quoted the id itself."""
    item_id = "x" * length
    expected = f"No knowledge item {item_id!r} is available in project {PROJECT_ID!r}."
    assert _refusal("knowledge.get", {"projectId": PROJECT_ID, "itemId": item_id}) == expected
    assert _refusal("knowledge.proposeChange", {"projectId": PROJECT_ID, "itemId": item_id, "body": "b\n",
                                                "expectedRevision": shop.revision_id, "author": "a"}) == expected


def test_an_item_id_past_its_bound_is_refused_at_the_wire_by_both_tools_and_by_length_where_no_schema_is(
        shop: Shop) -> None:
    item_id = "x" * (MAX_ITEM_ID_CHARS + 1)
    for tool, extra in [("knowledge.get", {}), ("knowledge.proposeChange", {"body": "b\n", "author": "a",
                                                                           "expectedRevision": shop.revision_id})]:
        assert _refusal(tool, {"projectId": PROJECT_ID, "itemId": item_id, **extra}) == (
            f"Invalid arguments for {tool}: `itemId` violates maxLength {MAX_ITEM_ID_CHARS}; a string of "
            f"{MAX_ITEM_ID_CHARS + 1} characters was sent.")
    request = ChangeRequest(item_id=item_id, expected_revision=shop.revision_id, body="b\n", author="a",
                            drafted_by="a test")
    with pytest.raises(ItemNotAvailableError) as refused:  # `theurian propose change` has no schema before it
        propose_change(resolve_project(PROJECT_ID), "internal", DraftFacade(shop.root), request)
    assert str(refused.value) == (f"No knowledge item an id of {MAX_ITEM_ID_CHARS + 1} characters is available in "
                                  f"project {PROJECT_ID!r}.")


def test_the_item_id_bound_is_the_one_every_schema_states(shop: Shop) -> None:
    for schema in ("knowledge-get-input.schema.json", "knowledge-propose-change-input.schema.json",
                   "review-generate-knowledge-candidate-input.schema.json"):
        assert schema_bound(schema, "itemId", "maxLength") == MAX_ITEM_ID_CHARS
    item_id = schemas.load("knowledge", "migration.schema.json")["$defs"]["addAlias"]["properties"]["itemId"]
    assert item_id["pattern"] == f"^{ITEM_ID.pattern}$"


@pytest.mark.parametrize(("op", "shown"), [
    ("x" * MAX_SHOWN_CHARS, repr("x" * MAX_SHOWN_CHARS)),
    ("x" * (MAX_SHOWN_CHARS + 1), f"a value of {MAX_SHOWN_CHARS + 1} characters"),
    ("a\u202eb", "'a\\u202eb'"), (7, "an integer, not a string")])
def test_an_operation_kind_no_draft_admits_is_quoted_whole_or_by_its_length(shop: Shop, op: Any, shown: str) -> None:
    text = _draft(shop, {"op": op, "itemId": shop.item_id})
    assert text.startswith(f"{DRAFT}: `operations[0].op` is {shown}; an operation's `op` must be one of ")


@pytest.mark.parametrize(("operation", "found"), [
    ({"itemId": "x"}, "`operations[1].op` is missing"), ({"op": 0}, "`operations[1].op` is an integer, not a string"),
    ({"op": None}, "`operations[1].op` is null, not a string")])
def test_an_operation_with_no_kind_names_the_op_key_and_the_ten_kinds(shop: Shop, operation: dict[str, Any],
                                                                       found: str) -> None:
    # Said before: "operation 1 is a value that is no kind", naming neither the key nor what it admits.
    good = {"op": "addAlias", "itemId": shop.item_id, "alias": "another-name"}
    text = _refusal(DRAFT, {"projectId": PROJECT_ID, "author": "a", "description": "d",
                            "operations": [good, operation]})
    assert text == (f"{DRAFT}: {found}; an operation's `op` must be one of the ten kinds this tool drafts: "
                    f"{', '.join(V1_DRAFT_KINDS)}. createItem and upsertRevision are drafted by "
                    "knowledge.proposeChange (or review.generateKnowledgeCandidate); changeSensitivity and "
                    "restoreItem are an operator's, written by hand. Nothing was drafted.")
    assert len(V1_DRAFT_KINDS) == 10 and "addAlias" in V1_DRAFT_KINDS
