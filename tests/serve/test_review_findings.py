"""review.findings through the real dispatcher: every filter, bound and refusal, and the served shape."""

from pathlib import Path

import pytest

from projection.findings_build import build_findings_store
from projection.findings_store import STORE_RELATIVE
from serve.review_filters import MAX_PULL_REQUEST
from serve.tools.findings import (
    DEFAULT_FINDINGS_LIMIT,
    FINDINGS_UNAVAILABLE_REFUSAL,
    MAX_FILTER_CHARS,
    MAX_FINDINGS_LIMIT,
    UNDERIVED_FILTER_REFUSAL,
)
from tests.projection.git_fixture import (
    LONG_TEXT,
    STANDARD_HISTORY,
    T0,
    Planned,
    message,
    trailer,
)
from tests.serve.findings_support import dispatch, git_project, refusal_text, registered_and_built, served
from theurian import registry
from theurian.places import FINDINGS_STORE_ESCAPE_CURE, PATH_ESCAPE_REFUSAL
from theurian.safety import SAFETY_TRIPLE

PROJECT = "findings-demo"
STRING_FILTERS = ("reviewer", "severity", "commitSha", "q", "family", "specialist")


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    return git_project(tmp_path_factory.mktemp("findings"), STANDARD_HISTORY)


@pytest.fixture
def project(history: tuple[Path, list[str]]) -> tuple[Path, list[str]]:
    """The standard history, registered and built under this test's own installation."""
    return registered_and_built(history, PROJECT)


def test_a_served_finding_carries_every_published_key_and_the_safety_triple(
    project: tuple[Path, list[str]],
) -> None:
    root, shas = project
    answer = served(dispatch(PROJECT, commitSha=shas[3]))
    assert answer == {"count": 1, "truncated": False, "findings": [{
        "commitSha": shas[3], "position": 0, "reviewer": "adversarial", "severity": "MEDIUM",
        "findingText": "same second B", "provider": "git", "sourceUri": shas[3],
        "committedAt": "2026-08-29T10:43:20.000000+00:00", "pullRequest": None, "family": None,
        "specialist": None, **SAFETY_TRIPLE, "hiddenCharacters": [],
    }]}


def test_findings_are_newest_first_and_same_second_commits_order_by_sha(
    project: tuple[Path, list[str]],
) -> None:
    root, shas = project
    answer = served(dispatch(PROJECT))
    keys = [(f["commitSha"], f["position"]) for f in answer["findings"]]
    tied = sorted([shas[2], shas[3]])
    assert keys == [(shas[4], 0), (shas[4], 1), (tied[0], 0), (tied[1], 0), (shas[1], 0), (shas[1], 2),
                    (shas[1], 3)]
    assert answer["count"] == 7 and answer["truncated"] is False
    assert all(f[k] == v for f in answer["findings"] for k, v in SAFETY_TRIPLE.items())


def test_a_page_boundary_is_stable_and_truncated_says_more_existed(project: tuple[Path, list[str]]) -> None:
    whole = served(dispatch(PROJECT))["findings"]
    first = served(dispatch(PROJECT, limit=3))
    assert first["findings"] == whole[:3] and first["count"] == 3 and first["truncated"] is True
    exact = served(dispatch(PROJECT, limit=7))
    assert exact["count"] == 7 and exact["truncated"] is False


def test_a_long_finding_is_served_cut_at_2000_characters_with_a_trailing_mark(
    project: tuple[Path, list[str]],
) -> None:
    [finding] = served(dispatch(PROJECT, severity="CRITICAL", reviewer="code-review"))["findings"]
    assert finding["findingText"] == LONG_TEXT[:2000] + "..."


def test_filters_select_exactly_and_combine(project: tuple[Path, list[str]]) -> None:
    root, shas = project

    def keys(**filters: object) -> list[tuple[str, int]]:
        return [(f["commitSha"], f["position"]) for f in served(dispatch(PROJECT, **filters))["findings"]]

    assert keys(reviewer="code-review") == [(shas[4], 0), (shas[4], 1), (shas[1], 2)]
    assert keys(severity="LOW") == [(shas[2], 0), (shas[1], 2)]
    assert keys(reviewer="security", severity="HIGH") == [(shas[1], 0)]
    assert keys(commitSha=shas[1].upper()) == [(shas[1], 0), (shas[1], 2), (shas[1], 3)]
    assert keys(q="PLAIN TEXT") == [(shas[1], 0)]
    assert keys(q="100%_done") == [(shas[4], 1)]
    assert keys(q="_") == [(shas[4], 1)]
    assert keys(commitSha="0" * 64) == []
    assert keys(q="nothing like this") == []


@pytest.mark.parametrize("limit", [0, -1, MAX_FINDINGS_LIMIT + 1])
def test_a_limit_outside_1_to_100_is_refused_naming_the_bound_not_clamped(
    project: tuple[Path, list[str]], limit: int
) -> None:
    text = refusal_text(dispatch(PROJECT, limit=limit))
    assert f"between 1 and {MAX_FINDINGS_LIMIT}" in text and str(limit) in text


def test_the_default_limit_is_20_and_100_is_admitted(tmp_path: Path) -> None:
    lines = [trailer("security", "LOW", f"finding {n}") for n in range(MAX_FINDINGS_LIMIT + 1)]
    registered_and_built(git_project(tmp_path, [Planned(T0, message("crowded", lines))]), "crowded")
    default = served(dispatch("crowded"))
    assert default["count"] == DEFAULT_FINDINGS_LIMIT and default["truncated"] is True
    full = served(dispatch("crowded", limit=MAX_FINDINGS_LIMIT))
    assert full["count"] == MAX_FINDINGS_LIMIT and full["truncated"] is True
    assert [f["position"] for f in full["findings"]] == list(range(MAX_FINDINGS_LIMIT))


@pytest.mark.parametrize(("key", "value"), [
    ("reviewer", "perf"), ("reviewer", "code"), ("reviewer", "Security"), ("severity", "high"),
    ("severity", "BLOCKER"),
])
def test_a_value_outside_a_closed_vocabulary_is_quoted_back_with_the_set_and_the_advice_to_omit(
    project: tuple[Path, list[str]], key: str, value: str
) -> None:
    text = refusal_text(dispatch(PROJECT, **{key: value}))
    vocabulary = "code-review, security, adversarial" if key == "reviewer" else "CRITICAL, HIGH, MEDIUM, LOW"
    assert repr(value) in text and vocabulary in text and "omit the filter" in text


@pytest.mark.parametrize(
    "sha", ["abc1234", "a" * 39, "a" * 41, "a" * 63, "a" * 65, "g" * 40, "a" * 40 + "\n"]
)
def test_a_commit_sha_that_is_not_a_full_40_or_64_hex_sha_is_refused(
    project: tuple[Path, list[str]], sha: str
) -> None:
    text = refusal_text(dispatch(PROJECT, commitSha=sha))
    assert "full 40- or 64-character" in text and repr(sha) in text


@pytest.mark.parametrize("key", STRING_FILTERS)
def test_every_string_filter_is_bounded_at_200_characters_and_a_longer_one_is_described_by_length(
    project: tuple[Path, list[str]], key: str
) -> None:
    text = refusal_text(dispatch(PROJECT, **{key: "Z" * (MAX_FILTER_CHARS + 1)}))
    assert f"bounded at {MAX_FILTER_CHARS} characters" in text
    assert f"a value of {MAX_FILTER_CHARS + 1} characters" in text
    assert "ZZZZ" not in text


@pytest.mark.parametrize("key", ["reviewer", "severity", "commitSha"])
def test_a_bad_value_inside_the_bound_is_quoted_back_whole(project: tuple[Path, list[str]], key: str) -> None:
    value = "Z" * MAX_FILTER_CHARS
    assert repr(value) in refusal_text(dispatch(PROJECT, **{key: value}))


def test_q_of_exactly_200_characters_is_searched(project: tuple[Path, list[str]]) -> None:
    assert served(dispatch(PROJECT, q="L" * MAX_FILTER_CHARS))["count"] == 1


@pytest.mark.parametrize("key", STRING_FILTERS)
@pytest.mark.parametrize("value", ["log\x00zzz", "\x00"])
def test_a_nul_in_any_string_filter_is_refused_not_searched(
    project: tuple[Path, list[str]], key: str, value: str
) -> None:
    assert "NUL (U+0000)" in refusal_text(dispatch(PROJECT, **{key: value}))


@pytest.mark.parametrize("key", STRING_FILTERS)
def test_a_lone_surrogate_in_any_string_filter_is_refused(project: tuple[Path, list[str]], key: str) -> None:
    assert "lone surrogate" in refusal_text(dispatch(PROJECT, **{key: "plain\ud800text"}))


def test_a_paired_astral_character_is_an_ordinary_search(project: tuple[Path, list[str]]) -> None:
    assert served(dispatch(PROJECT, q="\U0001f600"))["count"] == 0


@pytest.mark.parametrize("number", [0, -7, MAX_PULL_REQUEST + 1])
def test_a_pull_request_outside_the_column_range_is_refused_naming_the_range_and_quoted(
    project: tuple[Path, list[str]], number: int
) -> None:
    text = refusal_text(dispatch(PROJECT, pullRequest=number))
    assert f"between 1 and {MAX_PULL_REQUEST}" in text and str(number) in text
    assert text != UNDERIVED_FILTER_REFUSAL


def test_a_pull_request_with_more_digits_than_the_column_holds_is_described_by_digit_count(
    project: tuple[Path, list[str]],
) -> None:
    number = 12345678901234567890123456
    text = refusal_text(dispatch(PROJECT, pullRequest=number))
    assert f"between 1 and {MAX_PULL_REQUEST}" in text and "a number of 26 digits" in text
    assert "1234567890123" not in text.replace(str(MAX_PULL_REQUEST), "")


@pytest.mark.parametrize("arguments", [
    {"pullRequest": 1}, {"pullRequest": MAX_PULL_REQUEST}, {"family": "x"}, {"specialist": "x"},
    {"family": "", "specialist": ""},
])
def test_a_pull_request_in_range_and_any_family_or_specialist_get_the_one_build_constant_refusal(
    project: tuple[Path, list[str]], arguments: dict[str, object]
) -> None:
    assert refusal_text(dispatch(PROJECT, **arguments)) == UNDERIVED_FILTER_REFUSAL


def test_a_limit_past_its_bound_with_many_digits_is_not_echoed(project: tuple[Path, list[str]]) -> None:
    text = refusal_text(dispatch(PROJECT, limit=10**30))
    assert "a number of 31 digits" in text and "1000000000" not in text


def _unavailable() -> None:
    assert refusal_text(dispatch(PROJECT)) == FINDINGS_UNAVAILABLE_REFUSAL


def test_a_project_never_built_here_is_refused_with_the_one_constant(
    history: tuple[Path, list[str]], tmp_path: Path
) -> None:
    registry.register(git_project(tmp_path, STANDARD_HISTORY[:2])[0], PROJECT)
    _unavailable()


def test_a_store_copied_in_from_another_installation_is_refused_with_the_same_constant(
    history: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry.register(history[0], PROJECT)
    with monkeypatch.context() as other:
        other.setenv("THEURIAN_HOME", str(tmp_path / "another-installation"))
        build_findings_store(history[0])
    _unavailable()
    build_findings_store(history[0])
    assert served(dispatch(PROJECT))["count"] == 7  # the same file, built here, is served


def test_a_damaged_store_is_refused_with_the_same_constant(project: tuple[Path, list[str]]) -> None:
    (project[0] / STORE_RELATIVE).write_bytes(b"\x00" * 4096)
    _unavailable()


def test_a_store_linked_out_of_the_project_is_refused_as_a_path_escape_with_its_cure(
    project: tuple[Path, list[str]], tmp_path: Path
) -> None:
    store = project[0] / STORE_RELATIVE
    planted = tmp_path / "planted.sqlite"
    store.replace(planted)  # a well-formed store built here, reached through a link out of the tree
    store.symlink_to(planted)
    try:
        assert refusal_text(dispatch(PROJECT)) == f"{PATH_ESCAPE_REFUSAL} {FINDINGS_STORE_ESCAPE_CURE}"
    finally:
        store.unlink()
