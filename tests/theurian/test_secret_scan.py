"""theurian.secret_scan: each token family found whole, split tokens joined, prose and shas left alone."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tests.support.planted_secrets import CLEAN_TEXTS, PLANTED, PRIVATE_KEY_BLOCK, in_npmrc, in_prose
from theurian import secret_plugins
from theurian.secret_scan import (
    _CANDIDATE,
    CUSTOM_PLUGINS,
    MARKER_PATTERN,
    TYPE_NAMES,
    _configure,
    _could_hold_token,
    _may_hold_candidate,
    _scan_line,
    fingerprint,
    line_of,
    marker,
    scan_text,
)

FINE_GRAINED = PLANTED["github-fine-grained-token"]
NPM = PLANTED["npm-token"]


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_each_token_family_is_found_as_its_whole_value(kind: str) -> None:
    text = in_prose(kind)
    hits = scan_text(text)
    assert [(h.kind, text[h.start:h.end]) for h in hits] == [(kind, PLANTED[kind])]


def test_every_family_the_plugins_report_has_a_planted_value() -> None:
    assert set(TYPE_NAMES.values()) == set(PLANTED)


@pytest.mark.parametrize("text", CLEAN_TEXTS)
def test_review_prose_commit_shas_and_urls_are_not_secrets(text: str) -> None:
    assert scan_text(text) == []


def test_a_private_key_is_found_from_its_begin_line_to_its_end_line() -> None:
    text = "+" + PRIVATE_KEY_BLOCK.replace("\n", "\n+") + "\n+done"
    (hit,) = scan_text(text)
    assert text[hit.start:hit.end].startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert text[hit.start:hit.end].endswith("-----END RSA PRIVATE KEY-----")
    assert text[hit.end:] == "\n+done"


def test_a_private_key_without_an_end_line_runs_to_the_end_of_the_text() -> None:
    text = "before\n" + PRIVATE_KEY_BLOCK.rsplit("\n", 1)[0]
    (hit,) = scan_text(text)
    assert (hit.start, hit.end) == (len("before\n"), len(text))


def test_a_token_split_across_a_line_break_is_found_and_spans_both_lines() -> None:
    token = PLANTED["github-token"]
    text = f"the token was {token[:17]}\n{token[17:]} in the log"
    (hit,) = scan_text(text)
    assert (hit.kind, hit.value) == ("github-token", token)
    assert text[hit.start:hit.end] == f"{token[:17]}\n{token[17:]}"


def test_a_token_followed_by_a_line_starting_with_a_word_is_not_joined_to_it() -> None:
    token = PLANTED["aws-access-key"]
    text = f"key {token}.\nAnother line"
    assert [text[h.start:h.end] for h in scan_text(text)] == [token]


def test_two_secrets_in_one_text_are_two_hits_in_order() -> None:
    text = in_prose("aws-access-key") + "\n" + in_prose("slack-token")
    assert [h.kind for h in scan_text(text)] == ["aws-access-key", "slack-token"]


def test_a_fingerprint_depends_on_the_salt_and_the_value_and_never_shows_the_value() -> None:
    value = PLANTED["github-token"]
    first = fingerprint(b"a" * 32, value)
    assert first == fingerprint(b"a" * 32, value)
    assert first != fingerprint(b"b" * 32, value)
    assert first != fingerprint(b"a" * 32, PLANTED["npm-token"])
    assert len(first) == 16 and value not in first


def test_a_marker_names_the_type_and_fingerprint_and_reads_back() -> None:
    text = marker("github-token", "0123456789abcdef")
    match = MARKER_PATTERN.fullmatch(text)
    assert match is not None and (match[1], match[2]) == ("github-token", "0123456789abcdef")
    assert scan_text(text) == []


def test_line_of_counts_from_one() -> None:
    assert [line_of("a\nb\nc", at) for at in (0, 2, 4)] == [1, 2, 3]


def test_two_private_keys_in_one_text_are_two_blocks_and_the_text_between_them_stays() -> None:
    text = f"first\n{PRIVATE_KEY_BLOCK}\nbetween the keys\n{PRIVATE_KEY_BLOCK}\nlast"
    hits = scan_text(text)
    assert [text[h.start:h.end] for h in hits] == [PRIVATE_KEY_BLOCK, PRIVATE_KEY_BLOCK]
    assert text[hits[0].end:hits[1].start] == "\nbetween the keys\n"


def test_each_plugin_of_ours_is_registered_and_names_a_family() -> None:
    classes = {name: getattr(secret_plugins, name) for name in CUSTOM_PLUGINS}
    assert {cls.secret_type for cls in classes.values()} <= set(TYPE_NAMES)
    assert [n for n in dir(secret_plugins) if n.endswith("Detector") and n != "RegexBasedDetector"] == sorted(classes)


def test_a_fine_grained_github_token_is_found_at_exactly_its_documented_length() -> None:
    text = f"token {FINE_GRAINED} here"
    assert [(h.kind, h.value) for h in scan_text(text)] == [("github-fine-grained-token", FINE_GRAINED)]


@pytest.mark.parametrize("token", [FINE_GRAINED[:-1], FINE_GRAINED + "Q", FINE_GRAINED.replace("_", "Q", 2)[:-1],
                                   FINE_GRAINED.replace("n_B6", "nQB6")])
def test_a_github_pat_run_one_short_one_long_or_without_its_separator_is_not_a_fine_grained_token(token: str) -> None:
    assert scan_text(f"token {token} here") == []


def test_a_fine_grained_github_token_split_across_a_line_break_is_found_whole() -> None:
    text = f"the token was {FINE_GRAINED[:40]}\n{FINE_GRAINED[40:]} in the log"
    (hit,) = scan_text(text)
    assert (hit.kind, hit.value) == ("github-fine-grained-token", FINE_GRAINED)
    assert text[hit.start:hit.end] == f"{FINE_GRAINED[:40]}\n{FINE_GRAINED[40:]}"


@pytest.mark.parametrize("token", [NPM[:-1], NPM + "Q"])
def test_an_npm_run_one_short_or_one_long_is_not_an_npm_token(token: str) -> None:
    assert scan_text(f"Publish with NPM_TOKEN={token}, the automation token.") == []


def test_an_npm_token_in_an_npmrc_line_is_one_hit_of_the_whole_token() -> None:
    text = in_npmrc(NPM)  # both npm plugins report it: one span, one kind
    assert [(h.kind, text[h.start:h.end]) for h in scan_text(text)] == [("npm-token", NPM)]


def test_plugins_of_ours_are_found_even_when_detect_secrets_mapped_its_plugins_before_they_were_configured() -> None:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import default_settings

    with default_settings():  # another caller of detect-secrets in the process: its class map cached without ours
        get_mapping_from_secret_type_to_class.cache_clear()
        assert "GitHub Fine-Grained Token" not in get_mapping_from_secret_type_to_class()
    _configure()
    text = in_prose("github-fine-grained-token")
    assert [h.value for h in scan_text(text)] == [FINE_GRAINED]


def _plugin_patterns() -> list[tuple[str, re.Pattern[str]]]:
    _configure()
    from detect_secrets.settings import get_plugins

    return [(type(plugin).__name__, pattern) for plugin in get_plugins()
            for pattern in getattr(plugin, "denylist", ())]


@pytest.mark.parametrize(("plugin", "pattern"), _plugin_patterns(),
                         ids=lambda value: getattr(value, "pattern", value)[:40])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_the_pre_filter_passes_every_line_any_plugin_matches(plugin: str, pattern: re.Pattern[str],
                                                              data: st.DataObject) -> None:
    # The pre-filter is a superset of the plugins or secrets go unscanned: every line a plugin reports a secret in,
    # with its match generated from the plugin's own pattern amid ordinary lowercase prose, must pass it.
    found = data.draw(st.from_regex(pattern, fullmatch=True))
    before = data.draw(st.sampled_from(["", "see ", "the value ", "x = "]))
    after = data.draw(st.sampled_from(["", " here", " was leaked in the log", '"']))
    line = before + found + after
    assume("\n" not in line)
    if _scan_line(line):
        assert _could_hold_token(line), (plugin, line)


@pytest.mark.parametrize("text", ["architecture.rule-12 must hold", "testing.flaky-retries-and-backoff",
                                  "a-very-long-lowercase-kebab-identifier.with.dots", "git://bench/10000.md",
                                  "git://backend/src/scheduler/retry_policy.py".replace("_", "-"),
                                  "see docs/operating.md#backups-and-restore for the cure",
                                  "a+b=c/d+e=f/g+h=i/j+k"])
def test_a_lowercase_dotted_identifier_or_path_is_not_handed_to_the_plugins(text: str) -> None:
    assert not _could_hold_token(text)


def test_a_slack_token_of_lowercase_digits_and_dashes_is_scanned_although_its_run_is_not_token_shaped() -> None:
    # Found by the generated test above: the 16-character run swallowed the `xox?-` start the pre-filter's own
    # alternative looks for, and the run holds no capital or `_`, so the line was never handed to the plugins.
    line = "the value xoxa-0-0-0-0-0-0 was leaked in the log"
    assert _could_hold_token(line)
    assert [hit.kind for hit in scan_text(line)] == ["slack-token"]


# Pieces of every `_CANDIDATE` alternative, run characters, and separators the cheap test must see through:
# Unicode spaces `str.split` cuts at, letters `\\w` takes in, punctuation neither does.
_PIECES = st.sampled_from(["a", "Z", "0", "_", "+", "/", "=", ".", "-", "é", "字", " ", "\t", "\n", "\u2003",
                           "\x1c", "\xa0", ":", "@", "!", "XoX", "xox", "eyJ", "_authToken", "PRIVATE KEY",
                           "PuTTY-User-Key", "://", "aaaaaaaa", "ab/cd+ef=gh.ij-k"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
@example("at s://u:p@h")
@example("a XOXB-1- b")
@example("eyJhbGciOi")
@example("x _authToken y")
@example("-----BEGIN RSA PRIVATE KEY-----")
@example("PuTTY-User-Key-File-2")
@example("a 0123456789abcdef b")
def test_the_cheap_test_before_the_pre_filter_never_says_no_where_the_pre_filter_could_match(text: str) -> None:
    if _CANDIDATE.search(text) is not None:
        assert _may_hold_candidate(text), text
