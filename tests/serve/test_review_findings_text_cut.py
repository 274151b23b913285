"""review.findings' `findingText` cut, at its boundary: 2,000 characters are served whole with no mark, 2,001 are
cut to 2,000 plus `...`; characters are code points, so an astral character counts once. A store of the wrong
types is refused with the one constant, not an internal fault."""

import sqlite3
from pathlib import Path

import pytest

from projection.findings_store import MAX_FINDING_TEXT_CHARS, STORE_RELATIVE
from serve.tools.findings import FINDINGS_UNAVAILABLE_REFUSAL
from tests.projection.git_fixture import T0, Planned, message, trailer
from tests.serve.findings_support import dispatch, git_project, refusal_text, registered_and_built, served

PROJECT = "findings-cut"
ASTRAL = "\U0001f600"
CUT = MAX_FINDING_TEXT_CHARS
TEXTS = {
    "1999": "a" * (CUT - 1),
    "2000": "b" * CUT,
    "2001": "c" * (CUT + 1),
    "2000-astral-last": "d" * (CUT - 1) + ASTRAL,
    "2001-astral-at-cut": "e" * (CUT - 1) + ASTRAL + "f",
}


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    return git_project(tmp_path_factory.mktemp("findings-cut"),
                       [Planned(T0 + index, message(name, [trailer("security", "LOW", text)]))
                        for index, (name, text) in enumerate(TEXTS.items())])


@pytest.fixture
def project(history: tuple[Path, list[str]]) -> tuple[Path, list[str]]:
    return registered_and_built(history, PROJECT)


def _served_text(sha: str) -> str:
    [finding] = served(dispatch(PROJECT, commitSha=sha))["findings"]
    return str(finding["findingText"])


@pytest.mark.parametrize(("name", "expected"), [
    ("1999", "a" * (CUT - 1)),
    ("2000", "b" * CUT),
    ("2000-astral-last", "d" * (CUT - 1) + ASTRAL),
    ("2001", "c" * CUT + "..."),
    ("2001-astral-at-cut", "e" * (CUT - 1) + ASTRAL + "..."),
])
def test_finding_text_is_whole_up_to_2000_characters_and_cut_with_a_mark_from_2001(
    project: tuple[Path, list[str]], name: str, expected: str
) -> None:
    _, shas = project
    assert _served_text(shas[list(TEXTS).index(name)]) == expected


def test_q_still_matches_past_the_cut(project: tuple[Path, list[str]]) -> None:
    _, shas = project
    [finding] = served(dispatch(PROJECT, q=ASTRAL + "f"))["findings"]
    assert finding["commitSha"] == shas[4] and finding["findingText"].endswith(ASTRAL + "...")


@pytest.mark.parametrize("statement", [
    "UPDATE findings SET position = 1.5",
    "UPDATE findings SET finding_text = x'ff00'",
    "UPDATE findings SET finding_text = CAST(x'ff' AS TEXT)",
])
def test_a_store_holding_a_value_of_the_wrong_type_is_refused_with_the_one_constant(
    project: tuple[Path, list[str]], statement: str
) -> None:
    with sqlite3.connect(project[0] / STORE_RELATIVE) as connection:
        connection.execute(statement)
    assert refusal_text(dispatch(PROJECT)) == FINDINGS_UNAVAILABLE_REFUSAL
