from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import schemas
from evidence.errors import RecordKeyError
from evidence.records import (
    REPOSITORY_PATTERN,
    THREAD_DISMISSED,
    THREAD_OPEN,
    THREAD_OUTDATED,
    THREAD_RESOLVED,
    canonical_bytes,
    case_mask,
    clean_text,
    derive_thread_state,
    key_from_file_name,
    merge_comments,
    record_file_name,
    repository_folder,
)

KEY_CHARS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-=", max_size=40)
keys = st.builds(lambda first, rest: first + rest, st.sampled_from("aZ09_"), KEY_CHARS)


@given(keys, keys)
def test_distinct_keys_get_file_names_distinct_after_case_folding(a: str, b: str) -> None:
    assume(a != b)
    assert record_file_name(a).casefold() != record_file_name(b).casefold()


@given(keys)
def test_a_key_and_its_case_swapped_twin_get_distinct_names_on_a_case_folding_file_system(key: str) -> None:
    twin = key.swapcase()
    assume(twin != key)
    assert record_file_name(key).casefold() != record_file_name(twin).casefold()


@given(keys)
def test_a_file_name_decodes_back_to_its_key(key: str) -> None:
    assert key_from_file_name(record_file_name(key)) == key


def test_case_mask_sets_one_bit_per_upper_case_letter() -> None:
    assert case_mask("PR_kwDOAcme0042") == "e3"
    assert case_mask("abc") == "0"
    assert record_file_name("PRRT_x") == "PRRT_x.f.json"


@pytest.mark.parametrize(
    "bad", ["", "../etc", "a/b", ".hidden", "-rf", "a b", "ключ", "x" * 201, "a\x00b", "a.b"]
)
def test_a_key_outside_the_pattern_is_refused_before_naming_a_file(bad: str) -> None:
    with pytest.raises(RecordKeyError):
        record_file_name(bad)


@pytest.mark.parametrize(
    "name", ["PR_x.0.json", "PR_x.3.json.tmp", "pr_x.json", ".PR_x.1.json", "PR_x.01.json"]
)
def test_a_name_whose_mask_does_not_match_its_key_is_not_a_record_file(name: str) -> None:
    assert key_from_file_name(name) is None


def test_repository_folder_is_the_same_for_every_spelling_of_a_name() -> None:
    assert repository_folder("Acme/Order-Service") == repository_folder("acme/order-service")
    assert repository_folder("acme/order-service") != repository_folder("acme/order-services")
    assert repository_folder("a/b").startswith("sha256-") and len(repository_folder("a/b")) == 71


def test_canonical_bytes_do_not_depend_on_key_order_and_keep_text_whole() -> None:
    text = "修正 🎉 \u202e \x07 " + "x" * 70_000
    a = canonical_bytes({"b": 1, "a": text})
    b = canonical_bytes({"a": text, "b": 1})
    assert a == b and a.endswith(b"\n")
    assert "修正 🎉 \u202e".encode() in a and b"\\u0007" in a


def test_a_lone_surrogate_becomes_a_replacement_character() -> None:
    assert clean_text("a\ud800b") == "a\ufffdb"
    assert clean_text("ok 🎉") == "ok 🎉"


@pytest.mark.parametrize(
    ("resolved", "outdated", "review_state", "expected"),
    [
        (False, False, "COMMENTED", THREAD_OPEN),
        (True, False, "COMMENTED", THREAD_RESOLVED),
        (True, True, "CHANGES_REQUESTED", THREAD_RESOLVED),
        (False, True, None, THREAD_OUTDATED),
        (True, True, "DISMISSED", THREAD_DISMISSED),
        (False, False, "DISMISSED", THREAD_DISMISSED),
    ],
)
def test_thread_state_follows_dismissed_resolved_outdated_open_precedence(
    resolved: bool, outdated: bool, review_state: str | None, expected: str
) -> None:
    state = derive_thread_state(is_resolved=resolved, is_outdated=outdated, first_review_state=review_state)
    assert state == expected


def test_a_comment_gone_upstream_is_kept_and_marked_with_the_first_run_that_missed_it() -> None:
    old = [{"recordKey": "C1", "createdAt": "1"}, {"recordKey": "C2", "createdAt": "2"},
           {"recordKey": "C3", "createdAt": "3", "missingUpstreamSince": "RUN0"}]
    fetched = [{"recordKey": "C1", "createdAt": "1", "body": "edited"}]
    merged = merge_comments(fetched, old, run_id="RUN1")
    assert [c["recordKey"] for c in merged] == ["C1", "C2", "C3"]
    assert merged[0] == {"recordKey": "C1", "createdAt": "1", "body": "edited"}
    assert merged[1]["missingUpstreamSince"] == "RUN1"
    assert merged[2]["missingUpstreamSince"] == "RUN0"


def test_repository_folder_folds_ascii_only_and_equals_the_casefolded_one_for_every_valid_name() -> None:
    from evidence.records import fold_repository

    for name in ("Acme/Widgets", "acme/widgets", "OCTO-cat/Hello.World_2", "a/b"):
        assert fold_repository(name) == name.casefold()  # folder names made before stay the same
        assert repository_folder(name) == repository_folder(name.lower())
    # U+212A KELVIN SIGN casefolds to 'k': it must not share kitten's folder.
    assert repository_folder("acme/\u212aitten") != repository_folder("acme/kitten")


@pytest.mark.parametrize("schema_name", ["pull-request", "review-submission", "review-thread", "run-manifest"])
def test_every_evidence_schema_spells_the_one_repository_pattern(schema_name: str) -> None:
    schema = json.loads(
        (Path(schemas.__file__).parent / "evidence" / f"{schema_name}.schema.json").read_text(encoding="utf-8")
    )
    assert schema["properties"]["repository"]["pattern"] == f"^{REPOSITORY_PATTERN.pattern}$"


@pytest.mark.parametrize("name", ["a/b", "Acme/Order-Service", "a-/b", "x/a.b_c-D", "dash-1/...", "a/.b"])
def test_the_repository_pattern_admits_what_github_can_name(name: str) -> None:
    assert REPOSITORY_PATTERN.fullmatch(name) is not None


@pytest.mark.parametrize("name", ["-a/b", "a/.", "a/..", "a" * 40 + "/b", "a/" + "b" * 101, "ä/b", "a/b\n", "a/b/c"])
def test_the_repository_pattern_refuses_what_github_cannot_name(name: str) -> None:
    assert REPOSITORY_PATTERN.fullmatch(name) is None
