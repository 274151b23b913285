"""Where a build puts its store: onto the store's own name in the state folder, never through a link a clone
planted there."""

from __future__ import annotations

from pathlib import Path

from projection.findings_build import build_findings_store
from projection.findings_store import STORE_RELATIVE as FINDINGS_RELATIVE
from projection.findings_store import FindingFilter, read_findings
from projection.review_build import build_review_store
from projection.review_query import RecordFilter, read_records
from projection.review_store import STORE_RELATIVE as REVIEW_RELATIVE
from tests.projection.git_fixture import T0, Planned, git, message, trailer, write_history
from tests.projection.review_records import copy_fixture_lake

README = b"# A tracked file a planted link points the store at\n"


def _project_with_history(root: Path) -> Path:
    write_history(root, [Planned(T0, message("one", [trailer("security", "LOW", "first")]))])
    (root / ".theurian" / "state").mkdir(parents=True)
    return root


def test_a_findings_store_link_to_a_tracked_file_inside_the_project_is_replaced_not_written_through(
    tmp_path: Path,
) -> None:
    root = _project_with_history(tmp_path / "repo")
    (root / "README.md").write_bytes(README)
    git(root, "add", "README.md")
    git(root, "commit", "--quiet", "-m", "readme")
    (root / FINDINGS_RELATIVE).symlink_to(Path("../../README.md"))
    build_findings_store(root)
    assert (root / "README.md").read_bytes() == README
    assert not (root / FINDINGS_RELATIVE).is_symlink() and (root / FINDINGS_RELATIVE).is_file()
    assert [f.finding_text for f in read_findings(root, FindingFilter(), 10)] == ["first"]
    assert git(root, "status", "--porcelain", "--", "README.md") == ""
    assert sorted(p.name for p in root.iterdir()) == [".git", ".theurian", "README.md"]  # no temp beside README


def test_a_review_store_link_to_another_file_inside_the_state_folder_is_replaced_not_written_through(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    (root / ".theurian" / "state" / "keep").mkdir(parents=True)
    copy_fixture_lake(root)
    kept = root / ".theurian" / "state" / "keep" / "notes.txt"
    kept.write_bytes(README)
    (root / REVIEW_RELATIVE).symlink_to(Path("keep/notes.txt"))
    assert build_review_store(root).records == 6
    assert kept.read_bytes() == README
    assert not (root / REVIEW_RELATIVE).is_symlink() and (root / REVIEW_RELATIVE).is_file()
    assert len(read_records(root, RecordFilter(), 50)) == 6
    assert sorted(p.name for p in kept.parent.iterdir()) == ["notes.txt"]
