"""Where the store goes, `review build` can be unable to put one: a project whose path DuckDB cannot open a
database through (`?`, a backslash), or a folder at the store's name. Each is one line saying what to do, and
review.search answers the one constant refusal, never a DuckDB error."""

from __future__ import annotations

from pathlib import Path

import pytest

from serve.errors import ToolRefusal
from serve.tooling import Call, ServeSettings
from serve.tools.review import REVIEW_SEARCH_UNAVAILABLE_REFUSAL, review_search
from tests.projection.review_records import copy_fixture_lake
from tests.support.installation import Installation
from theurian.project import Project
from theurian.text import shell_word


@pytest.mark.parametrize("name", ["what?", "back\\slash"])
def test_a_project_path_duckdb_misreads_is_refused_by_build_and_search_in_one_line(
        installation: Installation, tmp_path: Path, name: str) -> None:
    made = installation.new_project_in_process(tmp_path / "made")  # init refuses such a path; a rename after it cannot
    root = made.rename(tmp_path / name)
    copy_fixture_lake(root)
    result = installation.cli("review", "build", "--project", str(root))
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("theurian: the project's path holds `?`, `\\` or bytes that are not UTF-8, which DuckDB "
                           "cannot open a database")
    assert line.endswith("move the project to a folder whose path has none of them, then run "
                         f"`theurian review build --project {shell_word(str(root))}`")
    assert list((root / ".theurian").rglob("*review-store*")) == []  # no temp folder, no store
    with pytest.raises(ToolRefusal) as refused:
        review_search(Call(ServeSettings("internal"), Project("p", root.resolve())))
    assert refused.value.message == REVIEW_SEARCH_UNAVAILABLE_REFUSAL


def test_a_folder_at_the_stores_name_is_refused_in_one_line_naming_the_cure(
        installation: Installation, tmp_path: Path) -> None:
    root = installation.new_project_in_process(tmp_path / "p")
    copy_fixture_lake(root)
    (root / ".theurian/state/review-store.duckdb").mkdir(parents=True)
    result = installation.cli("review", "build", "--project", str(root))
    assert result.returncode == 1
    assert result.stderr == (
        "theurian: .theurian/state/review-store.duckdb is a folder, so no store can be put in its place; nothing "
        "was built. Remove it (`rm -r .theurian/state/review-store.duckdb`: derived state, nothing authored is "
        f"lost), then run `theurian review build --project {root}`.\n")
    assert [p.name for p in (root / ".theurian/state").iterdir()] == ["review-store.duckdb"]  # no temp folder
