"""A project whose path DuckDB cannot open a database through (`?`, a backslash): `review build` says so and what
to do in one line, and review.search answers the one constant refusal, never a DuckDB error."""

from __future__ import annotations

from pathlib import Path

import pytest

from serve.refusal import ToolRefusal
from serve.tooling import Call, ServeSettings
from serve.tools.review import REVIEW_SEARCH_UNAVAILABLE_REFUSAL, review_search
from tests.projection.review_records import copy_fixture_lake
from tests.support.installation import Installation
from theurian.project import Project


@pytest.mark.parametrize("name", ["what?", "back\\slash"])
def test_a_project_path_duckdb_misreads_is_refused_by_build_and_search_in_one_line(
        installation: Installation, tmp_path: Path, name: str) -> None:
    root = installation.new_project(tmp_path / name)
    copy_fixture_lake(root)
    result = installation.cli("review", "build", "--project", str(root))
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("theurian: the project's path holds `?` or `\\`, which DuckDB cannot open a database")
    assert line.endswith("move the project to a folder whose path has neither, then run `theurian review build`")
    assert list((root / ".theurian").rglob("*review-store*")) == []  # no temp folder, no store
    with pytest.raises(ToolRefusal) as refused:
        review_search(Call(ServeSettings("internal"), Project("p", root.resolve())))
    assert refused.value.message == REVIEW_SEARCH_UNAVAILABLE_REFUSAL
