"""knowledge.search through the real dispatcher: both paths, the envelope, clamps, asOf, disclosure."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from knowledge.apply import apply_migrations
from knowledge.index import build_index
from knowledge.retrieval import (
    CHARS_PER_TOKEN,
    CUT_MARK,
    DEFAULT_SEARCH_LIMIT,
    MAX_EXCERPT_CHARS,
    MAX_MAX_TOKENS,
    MAX_SEARCH_LIMIT,
    MIN_MAX_TOKENS,
)
from knowledge.vocabulary import parse_rfc3339
from tests.knowledge.authoring import MigrationWriter
from tests.serve.knowledge_support import WIDGETS, answer, build_sample, refusal, registered_copy
from theurian.safety import SAFETY_TRIPLE


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample(tmp_path_factory.mktemp("knowledge") / "sample")


@pytest.fixture
def demo(built: Path, tmp_path: Path) -> Path:
    return registered_copy(built, tmp_path / "demo")


def search(**arguments: object) -> dict[str, object]:
    return answer("knowledge.search", {"projectId": "demo", **arguments})


def _drop_index(root: Path) -> None:
    (root / ".theurian/state/knowledge-index.json").unlink()


def test_a_matching_index_answers_on_the_ranked_path_with_scores_and_channels(demo: Path) -> None:
    response = search(query="JWT signature")
    status = answer("knowledge.status", {"projectId": "demo"})
    retrieval = response["retrieval"]
    assert retrieval["indexed"] is True and retrieval["fallbackReason"] is None and retrieval["stale"] is False
    assert retrieval["indexBuildId"] and retrieval["snapshotId"] == status["stateHash"]
    hits = response["results"]
    assert [h["itemId"] for h in hits][:1] == ["architecture.auth-policy"]
    assert all(0 < h["fusedScore"] <= 1 and h["foundBy"] for h in hits)
    assert hits == sorted(hits, key=lambda h: -h["fusedScore"])


def test_a_title_match_is_found_by_every_word_channel_and_outranks_a_body_match(demo: Path) -> None:
    hits = search(query="cache policy")["results"]
    assert hits[0]["itemId"] == "decision.cache-policy"
    assert hits[0]["foundBy"][:3] == ["lexical", "title", "trigram"]


def test_without_an_index_the_substring_fallback_answers_with_no_scores(demo: Path) -> None:
    _drop_index(demo)
    response = search(query="jwt")
    assert response["retrieval"] == {"snapshotId": response["retrieval"]["snapshotId"], "indexBuildId": None,
                                     "indexed": False, "fallbackReason": "no-index", "stale": None,
                                     "channels": [], "unavailableChannels": []}
    ids = [h["itemId"] for h in response["results"]]
    assert ids == ["architecture.auth-policy", "decision.cache-policy"]  # ASCII case folded, id order
    assert all("fusedScore" not in h and "foundBy" not in h for h in response["results"])


def test_an_index_built_from_an_earlier_state_is_stale_after_a_new_apply(demo: Path) -> None:
    writer = MigrationWriter(demo, created_at="2026-10-01T00:00:00Z")
    writer.item("incident.outage", "The JWT outage of October.", kind="incident", sensitivity="public")
    writer.write("outage")
    apply_migrations(demo)
    response = search(query="october")
    assert response["retrieval"]["indexed"] is False
    assert response["retrieval"]["fallbackReason"] == "index-stale"
    assert [h["itemId"] for h in response["results"]] == ["incident.outage"]


def test_an_index_file_that_cannot_be_read_falls_back_with_index_unreadable(demo: Path) -> None:
    pointer = json.loads((demo / ".theurian/state/knowledge-index.json").read_text(encoding="utf-8"))
    (demo / ".theurian/state" / pointer["indexFile"]).write_bytes(b"not an SQLite database at all" * 100)
    response = search(query="widgets", limit=1)
    assert response["retrieval"] == {"snapshotId": response["retrieval"]["snapshotId"], "indexBuildId": None,
                                     "indexed": False, "fallbackReason": "index-unreadable", "stale": None,
                                     "channels": [], "unavailableChannels": []}
    assert response["count"] == 1 and "fusedScore" not in response["results"][0]


@pytest.mark.parametrize("damage", [
    "UPDATE word_postings SET data = zeroblob(length(data))",  # the postings a ranked search reads, same size
    "DELETE FROM vocab_tri_data WHERE id > 1",  # the trigram vocabulary's term pages; its rows stay
])
def test_an_index_damaged_past_the_pages_its_probe_reads_falls_back_too_and_blames_the_index(
        demo: Path, damage: str) -> None:
    """The probe reads meta; the channels read the postings and the trigram vocabulary. Damage there was refused as
    an unreadable *state* (with the cure of deleting it) although the state was whole and the substring search
    could answer."""
    build_index(demo, "internal")  # a build no earlier test loaded: what it holds is read (and checked) afresh
    pointer = json.loads((demo / ".theurian/state/knowledge-index.json").read_text(encoding="utf-8"))
    with sqlite3.connect(demo / ".theurian/state" / pointer["indexFile"]) as index:
        index.execute(damage)
    response = search(query="widgets", limit=1)
    assert response["retrieval"]["fallbackReason"] == "index-unreadable"
    assert response["retrieval"]["indexed"] is False and response["retrieval"]["indexBuildId"] is None
    assert response["count"] == 1


def test_an_index_built_under_another_ceiling_is_not_used(demo: Path) -> None:
    response = answer("knowledge.search", {"projectId": "demo", "query": "widgets", "limit": 1}, ceiling="public")
    assert response["retrieval"]["fallbackReason"] == "index-ceiling-mismatch"


def test_every_hit_has_the_result_shape_with_source_anchors_and_the_safety_triple(demo: Path) -> None:
    for path in ("ranked", "fallback"):
        if path == "fallback":
            _drop_index(demo)
        hits = search(query="flaky")["results"]
        assert [h["itemId"] for h in hits] == ["testing.flaky-retries"]
        hit = hits[0]
        assert {k: hit[k] for k in SAFETY_TRIPLE} == SAFETY_TRIPLE
        assert hit["sourceAnchors"] == []  # the one item that declares it originates in Theurian
        assert hit["status"] == "approved" and hit["trustLevel"] == "inferred" and hit["sensitivity"] == "public"
        assert hit["freshness"]["revisionCreatedAt"] == "2026-08-01T09:00:00+09:00"
    auth = search(query="gateway")["results"][0]
    assert auth["sourceAnchors"] == [{"provider": "git", "sourceUri": "git://backend/architecture/auth-policy.md",
                                      "repository": "backend", "commitSha": "d4e5f6",
                                      "filePath": "architecture/auth-policy.md", "lineStart": 1, "lineEnd": 48}]


@pytest.mark.parametrize("indexed", [True, False], ids=["ranked", "fallback"])
@pytest.mark.parametrize(("sent", "applied"), [(1000, MAX_SEARCH_LIMIT), (0, 1), (-3, 1), (None, DEFAULT_SEARCH_LIMIT),
                                               (7, 7)])
def test_limit_is_clamped_not_refused(demo: Path, indexed: bool, sent: int | None, applied: int) -> None:
    if not indexed:
        _drop_index(demo)
    arguments: dict[str, object] = {"query": "widgets", "maxTokens": MAX_MAX_TOKENS}
    if sent is not None:
        arguments["limit"] = sent
    response = search(**arguments)
    assert response["limit"] == applied and response["count"] == applied == len(response["results"])
    assert WIDGETS > MAX_SEARCH_LIMIT


def test_max_tokens_is_clamped_and_bounds_the_excerpts(demo: Path) -> None:
    small = search(query="widgets", limit=MAX_SEARCH_LIMIT, maxTokens=1)
    assert small["maxTokens"] == MIN_MAX_TOKENS
    assert sum(len(h["excerpt"]) for h in small["results"]) <= MIN_MAX_TOKENS * CHARS_PER_TOKEN
    assert small["results"][0]["excerpt"].endswith("...") and 1 <= small["count"] < MAX_SEARCH_LIMIT
    large = search(query="widgets", limit=MAX_SEARCH_LIMIT, maxTokens=10**9)
    assert large["maxTokens"] == MAX_MAX_TOKENS and large["count"] == MAX_SEARCH_LIMIT


@pytest.mark.parametrize("indexed", [True, False], ids=["ranked", "fallback"])
def test_each_excerpt_is_at_most_600_characters_of_the_collapsed_body_a_longer_one_cut_with_the_mark(
        demo: Path, indexed: bool) -> None:
    # Far under the shared maxTokens budget (2000 × 4 characters), so only the per-excerpt cap can cut. The bodies
    # hold runs of spaces and line breaks: the cap counts the body with whitespace collapsed.
    words = " ".join(f"w{n:03d}" for n in range(MAX_EXCERPT_CHARS))  # 5 characters a word, with its space
    whole = "Zeppelin " + words[: MAX_EXCERPT_CHARS - len("Zeppelin ")]
    longer = "Zeppelin " + words[: MAX_EXCERPT_CHARS + 1 - len("Zeppelin ")]
    assert (len(whole), len(longer)) == (MAX_EXCERPT_CHARS, MAX_EXCERPT_CHARS + 1)
    writer = MigrationWriter(demo, created_at="2026-10-01T00:00:00Z")
    for item_id, body in (("convention.at-the-cap", whole), ("convention.past-the-cap", longer)):
        writer.item(item_id, body.replace(" ", " \n\t ", 40), kind="convention", sensitivity="public")
    writer.write("excerpt-cap")
    apply_migrations(demo)
    if indexed:
        build_index(demo, "internal")
    response = search(query="zeppelin")
    assert response["retrieval"]["indexed"] is indexed
    excerpts = {h["itemId"]: h["excerpt"] for h in response["results"]}
    assert excerpts == {"convention.at-the-cap": whole,
                        "convention.past-the-cap": longer[: MAX_EXCERPT_CHARS - len(CUT_MARK)] + CUT_MARK}


@pytest.mark.parametrize("as_of", ["2026-08-01T00:00:00Z", "2026-08-01T09:00:00+09:00"])
def test_as_of_excludes_items_outside_their_window_with_any_offset(demo: Path, as_of: str) -> None:
    # cache-policy starts 2026-09-01T00:00:00+09:00: not yet valid on 1 August, whichever offset names it.
    ids = {h["itemId"] for h in search(query="cache", asOf=as_of)["results"]}
    assert "decision.cache-policy" not in ids
    assert "decision.cache-policy" in {h["itemId"] for h in search(query="cache")["results"]}


def test_as_of_computes_is_within_validity_at_that_moment_not_now(demo: Path) -> None:
    # The old outage was valid through 2020 only: now it is outside its window, on 2020-06-01 inside.
    current = search(query="postmortem")["results"][0]
    assert current["itemId"] == "incident.old-outage" and current["freshness"]["isWithinValidity"] is False
    then = search(query="postmortem", asOf="2020-06-01T12:00:00+09:00")["results"][0]
    assert then["freshness"]["isWithinValidity"] is True and then["freshness"]["ageDays"] == 0
    within = search(query="flaky", asOf="2026-12-31T23:59:59+09:00")["results"][0]
    assert within["freshness"]["isWithinValidity"] is True
    assert within["freshness"]["ageDays"] == 152  # 2026-08-01T09:00+09:00 to 2026-12-31T23:59:59+09:00
    after = search(query="flaky", asOf="2027-01-01T00:00:00Z")["results"]
    assert after == []  # validTo is exclusive
    without = search(query="flaky")["results"][0]  # no asOf: nothing excluded, freshness against now
    assert without["itemId"] == "testing.flaky-retries"


def test_a_boundary_moment_just_before_valid_to_in_another_offset_is_inside(demo: Path) -> None:
    # 2027-01-01T08:59:59+09:00 is 2026-12-31T23:59:59Z: still inside a window ending 2027-01-01T00:00:00Z.
    hits = search(query="flaky", asOf="2027-01-01T08:59:59+09:00")["results"]
    assert hits[0]["freshness"]["isWithinValidity"] is True


@pytest.mark.parametrize("as_of", ["yesterday", "2026-08-01", "2026-08-01T00:00:00", "2026-13-01T00:00:00Z",
                                   "2026-08-01 00:00:00Z"])
def test_an_unparseable_as_of_is_a_clean_refusal_naming_the_fix(demo: Path, as_of: str) -> None:
    text = refusal("knowledge.search", {"projectId": "demo", "query": "jwt", "asOf": as_of})
    assert text == (f"asOf {as_of!r} is not an RFC 3339 timestamp with an explicit offset. Send one like "
                    "2026-08-01T00:00:00Z or 2026-08-01T09:00:00+09:00, or omit asOf.")


def test_items_above_the_ceiling_are_never_returned_on_either_path(demo: Path) -> None:
    ranked = search(query="rotation signing key")["results"]
    assert "security.token-rotation" not in {h["itemId"] for h in ranked}
    _drop_index(demo)
    fallback = search(query="rotate")["results"]
    assert fallback == []
    public = answer("knowledge.search", {"projectId": "demo", "query": "gateway"}, ceiling="public")
    assert public["results"] == []  # auth-policy is internal
    restricted = answer("knowledge.search", {"projectId": "demo", "query": "rotate"}, ceiling="restricted")
    assert [h["itemId"] for h in restricted["results"]] == ["security.token-rotation"]


def test_retired_items_are_never_returned(demo: Path) -> None:
    assert search(query="bastion")["results"] == []  # operations.legacy-deploy is deprecated
    _drop_index(demo)
    assert search(query="bastion")["results"] == []


def test_query_syntax_means_nothing_on_the_ranked_path(demo: Path) -> None:
    assert search(query='widgets" OR NEAR(')["count"] == DEFAULT_SEARCH_LIMIT
    assert search(query="***")["results"] == []


def test_an_unpaired_surrogate_in_the_query_is_folded_not_refused(demo: Path) -> None:
    _drop_index(demo)
    assert search(query="jwt\ud800")["results"] == []


@pytest.mark.parametrize("as_of", ["2016-12-31T23:59:60Z", "2017-01-01T08:59:60+09:00", "2016-12-31T23:59:60.5Z"])
def test_a_leap_second_as_of_is_accepted_as_the_last_instant_of_its_minute(demo: Path, as_of: str) -> None:
    # RFC 3339 allows second 60 (a leap second); Python's datetime has no such second, so it is read as :59.999999.
    assert parse_rfc3339(as_of) == datetime(2016, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    hits = search(query="widgets", asOf=as_of)["results"]
    assert hits and all(hit["freshness"]["isWithinValidity"] for hit in hits)
    assert search(query="postmortem", asOf=as_of)["results"] == []  # valid from 2020 only
