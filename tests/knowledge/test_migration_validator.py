"""The migration validator: valid documents pass, and every broken one names its operation and problem."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.errors import MigrationInvalidError
from knowledge.migrations import validate_document
from knowledge.vocabulary import ITEM_KINDS, SENSITIVITIES, STATUSES, TRUST_LEVELS, parse_rfc3339
from theurian.schema_faults import ECMA_DOLLAR_FAULT

FILE = "01K2AAAAAAAAAAAAAAAAAAAAAA-test.yaml"
ULID_CHARS = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

ulids = st.text(ULID_CHARS, min_size=26, max_size=26)
item_ids = st.from_regex(r"[a-z][a-z0-9._-]{0,30}", fullmatch=True)
offsets = st.sampled_from(["Z", "+09:00", "-05:30", "+00:00"])
timestamps = st.builds(lambda y, mo, d, h, off: f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:00:00{off}",
                       st.integers(2000, 2099), st.integers(1, 12), st.integers(1, 28), st.integers(0, 23), offsets)
anchors = st.fixed_dictionaries({"provider": st.just("git"), "sourceUri": st.just("git://repo/file.md")},
                                optional={"repository": st.just("repo"), "lineStart": st.integers(1, 10)})


def _revision(item_id: str, revision: str, status: str, trust: str, sensitivity: str, kind: str,
              anchor_list: list[dict[str, Any]]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"title": "T", "contentType": "text/markdown", "kind": kind, "namespace": "n",
                                "status": status, "owner": "o", "trustLevel": trust, "sensitivity": sensitivity,
                                "sourceAnchors": anchor_list}
    if not anchor_list:
        metadata["originatesInTheurian"] = True
    return {"op": "upsertRevision", "itemId": item_id, "revisionId": revision,
            "contentFile": "../knowledge/x.md", "contentSha256": "sha256:" + "0" * 64, "metadata": metadata}


operations = st.one_of(
    st.builds(lambda i, k: {"op": "createItem", "itemId": i, "kind": k, "namespace": "n", "owner": "o"},
              item_ids, st.sampled_from(ITEM_KINDS)),
    st.builds(_revision, item_ids, ulids, st.sampled_from(STATUSES), st.sampled_from(TRUST_LEVELS),
              st.sampled_from(SENSITIVITIES), st.sampled_from(ITEM_KINDS), st.lists(anchors, max_size=2)),
    st.builds(lambda i: {"op": "deprecateItem", "itemId": i}, item_ids),
    st.builds(lambda a, i: {"op": "addAlias", "alias": a, "itemId": i}, item_ids, item_ids),
    st.builds(lambda i, s: {"op": "changeSensitivity", "itemId": i, "sensitivity": s, "reason": "r"}, item_ids,
              st.sampled_from(SENSITIVITIES)),
    st.builds(lambda i, c: {"op": "addEvidence", "itemId": i, "anchor": {"provider": "git", "sourceUri": "u"},
                            "description": "d", "confidence": c}, item_ids, st.floats(0, 1)),
    st.builds(lambda s, t: {"op": "supersedeSpecification", "specId": s, "supersededBy": t}, item_ids, item_ids),
)
documents = st.builds(
    lambda mid, at, ops: {"apiVersion": "theurian.dev/v1", "id": mid, "createdAt": at, "author": "a",
                          "dependsOn": [], "description": "d", "operations": ops},
    ulids, timestamps, st.lists(operations, min_size=1, max_size=6))


@settings(max_examples=80, deadline=None)
@given(documents)
def test_every_well_formed_document_passes(document: dict[str, Any]) -> None:
    validate_document(FILE, document)


@settings(max_examples=80, deadline=None)
@given(documents, st.data())
def test_a_broken_operation_is_reported_with_its_own_index(document: dict[str, Any], data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(document["operations"]) - 1))
    broken = copy.deepcopy(document)
    operation = broken["operations"][index]
    how = data.draw(st.sampled_from(["drop-required", "unknown-key", "unknown-op"]))
    if how == "drop-required":
        operation.pop(data.draw(st.sampled_from(sorted(k for k in operation if k != "op"))))
    elif how == "unknown-key":
        operation["surprise"] = 1
    else:
        operation["op"] = "dropTable"
    with pytest.raises(MigrationInvalidError) as caught:
        validate_document(FILE, broken)
    assert caught.value.file_name == FILE and caught.value.operation_index == index
    assert str(caught.value.message).startswith(f"migration {FILE} is invalid at operation {index}: ")


@settings(max_examples=100, deadline=None)
@given(documents, st.sampled_from(["2026-08-01T00:00:00", "2026-08-01", "yesterday", "2026-08-01T00:00:00+9"]))
def test_a_created_at_without_an_explicit_offset_is_a_document_problem(document: dict[str, Any],
                                                                       created_at: str) -> None:
    with pytest.raises(MigrationInvalidError) as caught:
        validate_document(FILE, document | {"createdAt": created_at})
    assert caught.value.operation_index is None and "createdAt" in caught.value.problem


@given(timestamps)
def test_every_generated_timestamp_parses_to_an_aware_moment(text: str) -> None:
    assert parse_rfc3339(text).utcoffset() is not None


@pytest.mark.parametrize("fraction", ["1", "123456789", "1234567890", "1" * 30])
def test_a_fraction_of_any_length_is_rfc_3339_and_reads_to_the_microsecond(fraction: str) -> None:
    """`time-secfrac = "." 1*DIGIT`: ten digits were refused as "not an RFC 3339 timestamp"."""
    moment = parse_rfc3339(f"2026-08-01T00:00:00.{fraction}Z")
    assert moment.microsecond == int(fraction[:6].ljust(6, "0"))


@pytest.mark.parametrize(("mutate", "problem"), [
    (lambda op: op["metadata"].update(sourceAnchors=[], originatesInTheurian=False), "sourceAnchors` is empty"),
    (lambda op: op["metadata"].update(originatesInTheurian=True), "names an outside origin"),
    (lambda op: op["metadata"].update(validFrom="2026-02-01T00:00:00Z", validTo="2026-01-01T00:00:00Z"),
     "validTo` is not after"),
    (lambda op: op["metadata"]["sourceAnchors"][0].update(lineStart=9, lineEnd=3), "lineEnd is before"),
    (lambda op: op["metadata"].update(status="retired"), "metadata.status"),
    (lambda op: op.update(contentFile="../../etc/passwd"), "contentFile"),
])
def test_semantic_problems_name_the_operation_and_the_rule(mutate: Any, problem: str) -> None:
    operation = _revision("a.b", "01K2AAAAAAAAAAAAAAAAAAAAAB", "approved", "reviewed", "public", "api",
                          [{"provider": "git", "sourceUri": "u", "lineStart": 1, "lineEnd": 2}])
    mutate(operation)
    document = {"apiVersion": "theurian.dev/v1", "id": "01K2AAAAAAAAAAAAAAAAAAAAAA",
                "createdAt": "2026-08-01T00:00:00Z", "author": "a", "dependsOn": [], "description": "d",
                "operations": [{"op": "createItem", "itemId": "a.b", "kind": "api", "namespace": "n",
                                "owner": "o"}, operation]}
    with pytest.raises(MigrationInvalidError) as caught:
        validate_document(FILE, document)
    assert caught.value.operation_index == 1 and problem in caught.value.problem


def _document(operation: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"apiVersion": "theurian.dev/v1", "id": "01K2AAAAAAAAAAAAAAAAAAAAAA", "createdAt": "2026-08-01T00:00:00Z",
            "author": "a", "dependsOn": [], "description": "d", "operations": [operation], **top}


SECRET = "SECRET-VALUE"
REVISION = _revision("a.b", "01K2AAAAAAAAAAAAAAAAAAAAAB", "approved", "reviewed", "public", "api",
                     [{"provider": "git", "sourceUri": "u"}])


@pytest.mark.parametrize(("edit", "index", "problem"), [
    (lambda d: d.pop("author"), None, "the required key `author` is missing from the document"),
    (lambda d: d.update(apiVersion=SECRET), None, "`apiVersion` must be theurian.dev/v1; a string of 12 characters "
                                                  "was sent"),
    (lambda d: d.update(dependsOn=[SECRET]), None, "`dependsOn[0]` does not match the pattern "
                                                   "`^[0-9A-HJKMNP-TV-Z]{26}$`; a string of 12 characters was sent"),
    (lambda d: d.update({"caf\u00e9": SECRET}), None, "the key `caf\u00e9` is not allowed in the document"),
    (lambda d: d["operations"][0]["metadata"].pop("title"), 0,
     "the required key `title` is missing from `metadata`"),
    (lambda d: d["operations"][0]["metadata"].update(status=SECRET), 0,
     "`metadata.status` must be one of: draft, proposed, approved, deprecated, superseded, rejected; a string of 12 "
     "characters was sent"),
    (lambda d: d["operations"][0]["metadata"]["sourceAnchors"][0].update(lineStart=0), 0,
     "`metadata.sourceAnchors[0].lineStart` violates minimum 1"),
    (lambda d: d["operations"][0]["metadata"]["sourceAnchors"][0].update({"a\u202e": 1}), 0,
     "the key `a\\u202e` is not allowed in `metadata.sourceAnchors[0]`"),
    (lambda d: d["operations"][0]["metadata"].update(labels=["x", "x"]), 0,
     "`metadata.labels` holds the same item twice"),
    (lambda d: d["operations"][0]["metadata"]["sourceAnchors"][0].update(sourceUri=[SECRET]), 0,
     "`metadata.sourceAnchors[0].sourceUri` must be of type string; an array of 1 item was sent"),
])
def test_each_schema_fault_of_a_migration_names_its_place_and_never_the_value(
        edit: Any, index: int | None, problem: str) -> None:
    document = copy.deepcopy(_document(REVISION))
    edit(document)
    with pytest.raises(MigrationInvalidError) as caught:
        validate_document(FILE, document)
    assert (caught.value.operation_index, caught.value.problem) == (index, problem)
    assert str(caught.value).count(SECRET) == 0


def test_a_trailing_newline_the_schema_pattern_refuses_is_worded_as_every_schema_check_words_it() -> None:
    document = _document({"op": "addAlias", "alias": "lo\n", "itemId": "a.b"})
    with pytest.raises(MigrationInvalidError) as caught:
        validate_document(FILE, document)
    assert (caught.value.operation_index, caught.value.problem) == (0, ECMA_DOLLAR_FAULT)
