"""Building the findings store from a real git history, and every arm of reading it back."""

import sqlite3
import time
from pathlib import Path

import pytest

from projection.errors import FindingsStoreUnavailable, GitHistoryError
from projection.findings_build import build_findings_store
from projection.findings_store import FINDINGS_SCHEMA_VERSION, STORE_RELATIVE, FindingFilter, read_findings
from tests.projection.git_fixture import (
    LONG_TEXT,
    STANDARD_FINDINGS,
    STANDARD_HISTORY,
    STANDARD_MALFORMED,
    T0,
    Planned,
    git,
    message,
    trailer,
    write_history,
)
from theurian.errors import PathEscapeError
from theurian.installation import HOME_OVERRIDE_ENV, build_stamp_secret
from theurian.stamp import StampFields, compute_stamp


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("history") / "repo"
    return root, write_history(root, STANDARD_HISTORY)


@pytest.fixture
def built(history: tuple[Path, list[str]]) -> tuple[Path, list[str]]:
    build_findings_store(history[0])  # under this test's own installation secret
    return history


def _all(root: Path, where: FindingFilter | None = None, limit: int = 100) -> list[tuple[str, int]]:
    return [(f.commit_sha, f.position) for f in read_findings(root, where or FindingFilter(), limit)]


def test_the_build_reports_commits_findings_and_skipped_malformed_lines(
    history: tuple[Path, list[str]],
) -> None:
    summary = build_findings_store(history[0])
    assert (summary.commits, summary.findings, summary.malformed) == (
        len(STANDARD_HISTORY), STANDARD_FINDINGS, STANDARD_MALFORMED,
    )
    expected = f"built {STORE_RELATIVE}: {STANDARD_FINDINGS} findings from 6 commits"
    assert summary.describe().startswith(expected)


def test_findings_come_back_newest_first_with_sha_then_position_breaking_ties(
    built: tuple[Path, list[str]],
) -> None:
    root, shas = built
    same_second = sorted([shas[2], shas[3]])
    assert _all(root) == [
        (shas[4], 0), (shas[4], 1),
        (same_second[0], 0), (same_second[1], 0),
        (shas[1], 0), (shas[1], 2), (shas[1], 3),
    ]


def test_committed_at_is_the_committer_time_in_utc_with_microseconds(built: tuple[Path, list[str]]) -> None:
    root, shas = built
    [finding] = read_findings(root, FindingFilter(commit_sha=shas[1]), 1)
    assert finding.committed_at == "2026-08-29T10:41:40.000000+00:00"


def test_a_long_finding_is_stored_whole_and_served_cut_at_2000_characters_with_a_mark(
    built: tuple[Path, list[str]],
) -> None:
    root, shas = built
    [served] = read_findings(root, FindingFilter(commit_sha=shas[4], severity="CRITICAL"), 5)
    assert served.finding_text == LONG_TEXT[:2000] + "..."
    with sqlite3.connect(root / STORE_RELATIVE) as connection:
        [(stored,)] = connection.execute(
            "SELECT finding_text FROM findings WHERE commit_sha = ? AND position = 0", (shas[4],)
        ).fetchall()
    assert stored == LONG_TEXT


def test_text_is_kept_byte_for_byte_and_the_alias_is_stored_canonically(
    built: tuple[Path, list[str]],
) -> None:
    root, shas = built
    by_position = {f.position: f for f in read_findings(root, FindingFilter(commit_sha=shas[1]), 10)}
    assert by_position[3].finding_text == "byte-identical body accepted under a second item id  "
    assert by_position[2].reviewer == "code-review"


def test_q_is_a_literal_ascii_folded_substring_where_percent_and_underscore_are_ordinary(
    built: tuple[Path, list[str]],
) -> None:
    root, shas = built
    assert _all(root, FindingFilter(q_folded="100%_done")) == [(shas[4], 1)]
    assert _all(root, FindingFilter(q_folded="%")) == [(shas[4], 1)]
    assert _all(root, FindingFilter(q_folded="0%_d")) == [(shas[4], 1)]
    assert _all(root, FindingFilter(q_folded="plain text")) == [(shas[1], 0)]
    assert _all(root, FindingFilter(q_folded="no such words")) == []


def test_filters_combine_exactly(built: tuple[Path, list[str]]) -> None:
    root, shas = built
    assert _all(root, FindingFilter(reviewer="adversarial")) == [(shas[3], 0), (shas[1], 3)]
    assert _all(root, FindingFilter(reviewer="adversarial", severity="CRITICAL")) == [(shas[1], 3)]
    assert _all(root, FindingFilter(commit_sha=shas[0])) == []


def test_a_rebuild_swaps_in_a_new_file_without_disturbing_a_reader_of_the_old_one(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write_history(root, [Planned(T0, message("one", [trailer("security", "LOW", "first")]))])
    build_findings_store(root)
    reader = sqlite3.connect(f"{(root / STORE_RELATIVE).as_uri()}?mode=ro", uri=True)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM findings").fetchone() == (1,)
    write_history(root, [Planned(T0, message("one", [trailer("security", "LOW", "first")])),
                         Planned(T0 + 1, message("two", [trailer("security", "LOW", "second")]))])
    assert build_findings_store(root).findings == 2
    assert reader.execute("SELECT count(*) FROM findings").fetchone() == (1,)
    reader.close()
    assert len(read_findings(root, FindingFilter(), 10)) == 2
    assert sorted(p.name for p in (root / STORE_RELATIVE).parent.iterdir()) == [Path(STORE_RELATIVE).name]


def test_a_repository_without_commits_builds_an_empty_store(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    write_history(root, [])
    assert build_findings_store(root).commits == 0
    assert read_findings(root, FindingFilter(), 10) == []


def test_a_head_naming_a_missing_commit_is_an_error_and_keeps_the_store_it_had(tmp_path: Path) -> None:
    """Damage is not an empty history: reading it as one would replace the findings with none."""
    root = tmp_path / "repo"
    write_history(root, STANDARD_HISTORY)
    build_findings_store(root)
    before = _all(root)
    branch = (root / ".git/HEAD").read_text(encoding="utf-8").removeprefix("ref: ").strip()
    ref = root / ".git" / branch
    good = ref.read_text(encoding="utf-8")
    ref.write_text("1" * 40 + "\n", encoding="utf-8")
    with pytest.raises(GitHistoryError, match="cannot read the git history"):
        build_findings_store(root)
    ref.write_text(good, encoding="utf-8")  # the store answers for that commit, and is read back at it
    assert _all(root) == before and before


def _reason(root: Path) -> str:
    with pytest.raises(FindingsStoreUnavailable) as caught:
        read_findings(root, FindingFilter(), 10)
    return caught.value.reason


def test_an_absent_store_is_unavailable(tmp_path: Path) -> None:
    assert _reason(tmp_path) == "absent"


def test_a_store_built_under_another_installations_secret_is_unavailable(
    built: tuple[Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOME_OVERRIDE_ENV, str(tmp_path / "another-installation"))
    assert _reason(built[0]) == "a stamp this installation did not make"


def test_a_store_stamped_here_by_a_superseded_schema_is_unavailable(built: tuple[Path, list[str]]) -> None:
    root = built[0]
    with sqlite3.connect(root / STORE_RELATIVE) as connection:
        row = connection.execute(
            "SELECT store, schema_version, format_version, build_id, row_count, row_digest FROM build_stamp"
        ).fetchone()
        old = StampFields(row[0], FINDINGS_SCHEMA_VERSION - 1, *row[2:])
        connection.execute("UPDATE build_stamp SET schema_version = ?, stamp = ?",
                           (old.schema_version, compute_stamp(old, build_stamp_secret())))
    assert _reason(root).startswith("stale")


def test_a_store_whose_rows_were_edited_after_the_build_is_unavailable(built: tuple[Path, list[str]]) -> None:
    root = built[0]
    read_findings(root, FindingFilter(), 1)  # verified once, so the edit must defeat the per-file cache too
    with sqlite3.connect(root / STORE_RELATIVE) as connection:
        connection.execute("UPDATE findings SET finding_text = 'planted' WHERE position = 0")
    assert _reason(root).startswith("damaged")


@pytest.mark.parametrize("damage", ["garbage", "truncated", "no-stamp"])
def test_a_store_that_cannot_be_read_or_carries_no_stamp_is_unavailable(
    built: tuple[Path, list[str]], damage: str
) -> None:
    path = built[0] / STORE_RELATIVE
    if damage == "garbage":
        path.write_bytes(b"this is not a database" * 100)
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:1024])
    else:
        with sqlite3.connect(path) as connection:
            connection.execute("DELETE FROM build_stamp")
    with pytest.raises(FindingsStoreUnavailable):
        read_findings(built[0], FindingFilter(), 10)


def test_outside_any_git_repository_the_build_writes_an_empty_store_that_is_served_as_no_finding(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    (root / ".theurian").mkdir(parents=True)
    summary = build_findings_store(root)
    assert (summary.commits, summary.findings, summary.in_repository) == (0, 0, False)
    assert summary.describe().endswith("; the project is not inside a git repository: no history, so no findings")
    assert read_findings(root, FindingFilter(), 10) == []


def test_a_store_file_linked_out_of_the_project_is_refused_by_build_before_git_and_by_read(
    tmp_path: Path,
) -> None:
    root, outside = tmp_path / "project", tmp_path / "outside"
    (root / ".theurian" / "state").mkdir(parents=True)
    outside.mkdir()
    (root / STORE_RELATIVE).symlink_to(outside / "planted.sqlite")
    with pytest.raises(PathEscapeError):
        build_findings_store(root)  # not a git repository: reading git first would raise GitHistoryError
    with pytest.raises(PathEscapeError):
        read_findings(root, FindingFilter(), 10)
    assert list(outside.iterdir()) == []


def test_a_state_folder_linked_out_of_the_project_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "project", tmp_path / "outside"
    (root / ".theurian").mkdir(parents=True)
    outside.mkdir()
    (root / ".theurian" / "state").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathEscapeError):
        build_findings_store(root)
    assert list(outside.iterdir()) == []


def test_a_checkout_of_an_older_commit_makes_the_store_stale_until_head_is_back(tmp_path: Path) -> None:
    # The older commit lacks a finding the store holds; its time is before the build's, so a rule by commit time
    # served the store as current.
    root = tmp_path / "repo"
    shas = write_history(root, [Planned(T0, message("one", [trailer("security", "HIGH", "first")])),
                                Planned(T0 + 60, message("two", [trailer("security", "LOW", "second")]))])
    build_findings_store(root)
    git(root, "checkout", "-q", "--detach", shas[0])
    assert _reason(root) == "stale: HEAD names another commit than the one it was built from"
    git(root, "checkout", "-q", "--detach", shas[1])
    assert [f.finding_text for f in read_findings(root, FindingFilter(), 10)] == ["second", "first"]


def test_a_store_built_at_a_commit_dated_in_the_future_is_served(tmp_path: Path) -> None:
    # A clock ahead on the committer's machine: a rule by commit time refused every build of this history.
    root = tmp_path / "repo"
    write_history(root, [Planned(int(time.time()) + 86_400, message("ahead", [trailer("security", "LOW", "x")]))])
    build_findings_store(root)
    assert [f.finding_text for f in read_findings(root, FindingFilter(), 10)] == ["x"]


def test_a_store_whose_recorded_commit_was_rewritten_to_head_is_damaged_not_current(tmp_path: Path) -> None:
    # Moving the recorded commit to HEAD by hand would make a stale store read as current: the stamp covers it.
    root = tmp_path / "repo"
    shas = write_history(root, STANDARD_HISTORY)
    build_findings_store(root)
    git(root, "commit", "-q", "--allow-empty", "-m", "later")
    head = git(root, "rev-parse", "HEAD").strip()
    assert head not in shas
    with sqlite3.connect(root / STORE_RELATIVE) as connection:
        connection.execute("UPDATE built_from SET head_sha = ?", (head,))
    assert _reason(root).startswith("damaged")
