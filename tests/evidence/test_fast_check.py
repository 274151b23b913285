"""The fast evidence check (jsonschema-rs) agrees with jsonschema record by record, but for the one documented
difference — a pattern's `$` before a final newline — where the stricter reading decides."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import schemas
from evidence.errors import RecordInvalidError
from evidence.fast_check import record_check, schema_check
from evidence.records import KINDS
from evidence.validation import MANIFEST_SCHEMA, validate_manifest, validate_record
from evidence.validation import _validator as jsonschema_validator
from tests.evidence.sample_lake import FIXTURE_LAKE
from tests.projection.review_records import _sample
from theurian.schema_faults import ECMA_DOLLAR_FAULT, describe

# Integral floats (1.0, -0.0, 2.0**63) are integers to JSON Schema; non-integral ones, inf and nan are not.
# Integers past 64 bits: both read them exactly (a line number may be any size; a pull request number is bounded).
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 2**64), st.integers(-3, 2**64).map(float),
                   st.sampled_from([0.5, 1.5, -0.0, float("inf"), float("nan"), 2.0**63, 2**70, -(2**70)]),
                   st.text(max_size=5), st.just("LEFT"), st.just("OPEN"), st.just("https://x/y"),
                   st.just("2026-05-02T10:00:00Z"), st.lists(st.integers(), max_size=2),
                   st.dictionaries(st.sampled_from(["id", "login", "type", "x"]), st.text(max_size=3), max_size=3))


def _jsonschema_accepts(record: dict[str, Any]) -> bool:
    kind = record.get("kind")
    if kind not in KINDS:
        return False
    return jsonschema_validator(f"{kind}.schema.json").is_valid(record)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


def _strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [*node, *(s for value in node.values() for s in _strings(value))]
    if isinstance(node, list):
        return [s for value in node for s in _strings(value)]
    return []


def _mutate(document: Any, data: st.DataObject, added: list[str], values: st.SearchStrategy[Any]) -> None:
    """One to three random edits of `document` in place: a value set, a key deleted or a key (one of `added`) added."""
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(document)))
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        action = data.draw(st.sampled_from(["set", "delete", "add"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[data.draw(st.sampled_from(added))] = data.draw(values)
        else:
            parent[path[-1]] = data.draw(values)


@settings(max_examples=400, deadline=None)
@given(kind=st.sampled_from(KINDS), data=st.data())
def test_the_fast_check_accepts_what_jsonschema_accepts_but_a_newline_before_the_end(
        kind: str, data: st.DataObject) -> None:
    record = copy.deepcopy(_sample(kind))
    assert record_check(kind)(record) is True
    _mutate(record, data, ["extra", "body", "id"], VALUES)
    fast, reference = record_check(kind)(record), _jsonschema_accepts(record)
    if fast != reference:
        # Never more lenient than jsonschema; stricter only where a string ends in a newline.
        assert reference and not fast
        assert any(s.endswith("\n") for s in _strings(record))
    if not fast:
        with pytest.raises(RecordInvalidError):
            validate_record(record)
    else:
        validate_record(record)


def test_a_key_ending_in_a_newline_is_refused_with_a_reason_though_jsonschema_lets_it_pass() -> None:
    record = copy.deepcopy(_sample("pull-request"))
    record["recordKey"] += "\n"
    assert _jsonschema_accepts(record)  # Python's `$` matches before a final newline
    assert not record_check("pull-request")(record)
    with pytest.raises(RecordInvalidError) as refused:
        validate_record(record, path="x/pull-request/k.json")
    assert refused.value.args[0] == f"x/pull-request/k.json: {ECMA_DOLLAR_FAULT}"


def test_an_integral_float_is_an_integer_a_bool_never_is_and_a_huge_integer_is_a_verdict_not_a_crash() -> None:
    record = copy.deepcopy(_sample("review-thread"))
    record["pullRequest"] = 1.0
    assert _jsonschema_accepts(record) and record_check("review-thread")(record)
    for value in (True, 1.5, 2**70, float("nan")):
        record["pullRequest"] = value
        assert not _jsonschema_accepts(record) and not record_check("review-thread")(record)


def test_jsonschema_checks_no_format_the_evidence_schemas_use_so_the_fast_check_may_treat_formats_as_notes() -> None:
    """The fast check reads `format` as an annotation (draft 2020-12's default). That is "never more lenient" only
    while jsonschema checks none of the formats the evidence schemas name: installing `rfc3339-validator` would
    make it check `date-time`, and this test says so before the two drift apart."""
    used: set[str] = set()

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("format"), str):
                used.add(node["format"])
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    for name in [f"{kind}.schema.json" for kind in KINDS] + [MANIFEST_SCHEMA]:  # a manifest is checked fast too
        collect(schemas.load("evidence", name))
    assert used == {"date-time"}
    assert not used & set(jsonschema.FormatChecker().checkers)


@pytest.mark.parametrize("kind", [["pull-request"], {"a": 1}, None, 7, "pull-requests", ""])
def test_a_record_of_no_known_kind_is_refused_by_name_whatever_its_kind_holds(kind: object) -> None:
    record = {**copy.deepcopy(_sample("pull-request")), "kind": kind}
    with pytest.raises(RecordInvalidError, match="^x: kind is not one of pull-request, review-submission"):
        validate_record(record, path="x")


@pytest.mark.parametrize("kind", KINDS)
def test_a_record_of_a_known_kind_is_checked_against_that_kinds_schema_each_time(kind: str) -> None:
    for _ in range(2):  # the first check of a kind, and the one remembered for the next record
        validate_record(copy.deepcopy(_sample(kind)))
        with pytest.raises(RecordInvalidError, match="^x: `recordKey` must be of type string$"):
            validate_record({**copy.deepcopy(_sample(kind)), "recordKey": 7}, path="x")


def _sample_manifest() -> dict[str, Any]:
    manifest: dict[str, Any] = orjson.loads((FIXTURE_LAKE / "runs/01K4YQ7N2B3C4D5E6F7G8H9JKM.json").read_bytes())
    folder = manifest["repositoryFolder"]
    manifest["records"] = [{"kind": kind, "recordKey": f"K_{index}", "recordPath": f"{folder}/{kind}/K_{index}.1.json",
                            "sha256": "sha256:" + "0" * 64} for index, kind in enumerate(KINDS)]
    return manifest


@settings(max_examples=400, deadline=None)
@given(data=st.data(), entries_checked=st.sampled_from([0, 1]))
def test_a_manifest_is_refused_exactly_when_jsonschema_refuses_it(data: st.DataObject, entries_checked: int) -> None:
    manifest = _sample_manifest()
    validate_manifest(manifest)
    _mutate(manifest, data, ["extra", "status", "recordKey"], VALUES | st.just("K_1\n"))
    records = manifest.get("records")
    checked = {**manifest, "records": records[entries_checked:]} if isinstance(records, list) else manifest
    reference = jsonschema_validator(MANIFEST_SCHEMA).is_valid(checked)
    if schema_check(MANIFEST_SCHEMA)(checked):
        assert reference  # the fast check never passes what jsonschema refuses
    if not reference:
        with pytest.raises(RecordInvalidError) as refused:
            validate_manifest(manifest, path="m", entries_checked=entries_checked)
        error = jsonschema.exceptions.best_match(jsonschema_validator(MANIFEST_SCHEMA).iter_errors(checked))
        assert error is not None and refused.value.args[0] == f"m: {describe(error, 'the manifest', sent=False)}"


def test_a_manifest_whose_key_ends_in_a_newline_passes_as_jsonschema_lets_it() -> None:
    manifest = _sample_manifest()
    manifest["records"][0]["recordKey"] += "\n"
    assert not schema_check(MANIFEST_SCHEMA)(manifest)  # stricter than jsonschema here: jsonschema decides
    validate_manifest(manifest)


@pytest.mark.parametrize(("edit", "fault"), [
    (lambda r: r.pop("recordKey"), "the required key `recordKey` is missing from the record"),
    (lambda r: r.__setitem__("recordKey", ["SECRET"]), "`recordKey` must be of type string"),
    (lambda r: r.__setitem__("SECRET\u202e", 1), "the key `SECRET\\u202e` is not allowed in the record"),
])
def test_a_record_fault_names_its_place_and_constraint_and_no_value_the_record_holds(edit: Any, fault: str) -> None:
    """A stored record was not sent by anyone: its fault gives no "was sent" clause, and the reader names the file."""
    record = copy.deepcopy(_sample("pull-request"))
    edit(record)
    with pytest.raises(RecordInvalidError) as refused:
        validate_record(record, path="x/pull-request/k.json")
    assert refused.value.args[0] == f"x/pull-request/k.json: {fault}"

