"""evidence.redaction.screen: every text field scanned, secrets replaced by markers, redactions listed in the
envelope, participants pseudonymised — deterministic, so a screened record screens to itself."""

from __future__ import annotations

import pytest

from evidence.content_policy import ContentPolicy
from evidence.records import canonical_bytes
from evidence.redaction import PSEUDONYM_PATTERN, REDACTIONS_FIELD, pseudonym, screen
from evidence.validation import validate_record
from tests.projection.review_records import pull_request, review, thread
from tests.support.planted_secrets import PLANTED, in_prose
from theurian.secret_scan import fingerprint

SALT = bytes(range(32))
REDACT = ContentPolicy("redact", False, frozenset(), SALT)
REPO = "Acme/Widgets"


def _all_text(record: object) -> str:
    return canonical_bytes(record).decode("utf-8")  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_each_family_in_a_comment_body_is_replaced_by_a_marker_and_listed(kind: str) -> None:
    record = thread(REPO, 1, "PRRT_a", bodies=("fine", in_prose(kind)))
    screened = screen(record, REDACT)
    print_ = fingerprint(SALT, PLANTED[kind])
    assert PLANTED[kind] not in _all_text(screened.record)
    assert f"[REDACTED {kind} {print_}]" in screened.record["comments"][1]["body"]
    assert screened.record[REDACTIONS_FIELD] == [
        {"field": "comments[PRRT_a_c1].body", "type": kind, "fingerprint": print_}]
    assert [f.entry() for f in screened.findings] == screened.record[REDACTIONS_FIELD]
    validate_record(screened.record)


def test_a_pull_request_title_and_body_a_review_body_and_a_diff_hunk_are_all_scanned() -> None:
    pr = screen(pull_request(REPO, 1, "PR_a", title=f"Fix {PLANTED['aws-access-key']}",
                             body=in_prose("slack-token")), REDACT)
    assert {e["field"] for e in pr.record[REDACTIONS_FIELD]} == {"title", "body"}
    sub = screen(review(REPO, 1, "PRR_a", body=in_prose("stripe-key")), REDACT)
    assert [e["field"] for e in sub.record[REDACTIONS_FIELD]] == ["body"]
    record = thread(REPO, 1, "PRRT_h")
    record["comments"][0]["diffHunk"] = "@@ -1 +1 @@\n+" + PRIVATE_KEY_LINES  # BEGIN line to END line, + and all
    hunk = screen(record, REDACT)
    print_ = fingerprint(SALT, PRIVATE_KEY_LINES)
    assert hunk.record["comments"][0]["diffHunk"] == f"@@ -1 +1 @@\n+[REDACTED private-key {print_}]"
    assert [e["field"] for e in hunk.record[REDACTIONS_FIELD]] == ["comments[PRRT_h_c0].diffHunk"]


PRIVATE_KEY_LINES = PLANTED["private-key"].replace("\n", "\n+")


def test_a_screened_record_screens_to_the_same_bytes_and_finds_nothing_new() -> None:
    once = screen(thread(REPO, 1, "PRRT_b", bodies=(in_prose("github-token"),)), REDACT)
    twice = screen(once.record, REDACT)
    assert canonical_bytes(twice.record) == canonical_bytes(once.record)
    assert twice.findings == ()


def test_the_same_record_screens_to_the_same_bytes_every_time() -> None:
    records = [thread(REPO, 1, "PRRT_c", bodies=(in_prose("npm-token"), in_prose("json-web-token")))
               for _ in range(2)]
    assert canonical_bytes(screen(records[0], REDACT).record) == canonical_bytes(screen(records[1], REDACT).record)


def test_a_kept_comment_redacted_by_an_earlier_run_keeps_its_entry_in_the_envelope() -> None:
    earlier = screen(thread(REPO, 1, "PRRT_d", bodies=(in_prose("github-token"), "later")), REDACT).record
    refetched = thread(REPO, 1, "PRRT_d", bodies=("ok", "later"))
    refetched["comments"][0] = earlier["comments"][0]  # kept from the lake (gone upstream)
    assert screen(refetched, REDACT).record[REDACTIONS_FIELD] == earlier[REDACTIONS_FIELD]


@pytest.mark.parametrize("policy", ["block", "warn", "off"])
def test_block_warn_and_off_leave_the_text_as_it_is(policy: str) -> None:
    record = thread(REPO, 1, "PRRT_e", bodies=(in_prose("github-token"),))
    screened = screen(record, ContentPolicy(policy, False, frozenset(), SALT))
    assert screened.record == record
    assert [f.kind for f in screened.findings] == ([] if policy == "off" else ["github-token"])


def test_an_acknowledged_fingerprint_is_neither_found_nor_redacted() -> None:
    record = thread(REPO, 1, "PRRT_f", bodies=(in_prose("aws-access-key"),))
    policy = ContentPolicy("redact", False, frozenset({fingerprint(SALT, PLANTED["aws-access-key"])}), SALT)
    screened = screen(record, policy)
    assert screened.findings == () and screened.record == record


def test_participants_become_stable_pseudonyms_keyed_by_the_salt() -> None:
    policy = ContentPolicy("redact", True, frozenset(), SALT)
    record = thread(REPO, 1, "PRRT_g", bodies=("a", "b"), author_id="U_alice")
    first = screen(record, policy).record
    again = screen(thread(REPO, 2, "PRRT_x", author_id="U_alice"), policy).record
    author = first["comments"][0]["author"]
    assert PSEUDONYM_PATTERN.fullmatch(author["login"]) and author["id"] == author["login"]
    assert again["comments"][0]["author"] == author  # the same person, another record
    assert first["comments"][1]["author"] != author  # another person
    assert "U_alice" not in _all_text(first)
    assert screen(first, policy).record == first  # a pseudonym is never pseudonymised again
    other_salt = ContentPolicy("redact", True, frozenset(), b"x" * 32)
    assert screen(record, other_salt).record["comments"][0]["author"]["login"] != author["login"]
    assert pseudonym(SALT, {"id": "U_alice", "login": "alice"}) == author["login"]
    validate_record(first)


def test_a_deleted_account_stays_null_under_pseudonyms() -> None:
    record = pull_request(REPO, 1, "PR_n")
    record["author"] = None
    assert screen(record, ContentPolicy("redact", True, frozenset(), SALT)).record["author"] is None
