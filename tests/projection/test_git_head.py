"""HEAD's sha read from a repository's own files, for every layout git leaves them in, checked against git."""

from pathlib import Path

from projection.git_head import head_sha
from tests.projection.git_fixture import T0, Planned, git, write_history

HISTORY = (Planned(T0, "first\n"), Planned(T0 + 60, "second\n"))


def _repository(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "repo"
    return root, write_history(root, HISTORY)


def test_a_loose_branch_ref_is_read(tmp_path: Path) -> None:
    root, shas = _repository(tmp_path)
    git(root, "symbolic-ref", "HEAD", "refs/heads/main")
    assert head_sha(root) == shas[-1] == git(root, "rev-parse", "HEAD").strip()


def test_a_packed_ref_is_read_from_packed_refs(tmp_path: Path) -> None:
    root, shas = _repository(tmp_path)
    git(root, "pack-refs", "--all")
    assert not (root / ".git/refs/heads/main").exists()
    assert head_sha(root) == shas[-1]


def test_a_detached_head_names_its_own_sha(tmp_path: Path) -> None:
    root, shas = _repository(tmp_path)
    git(root, "checkout", "-q", "--detach", shas[0])
    assert head_sha(root) == shas[0]


def test_an_unborn_head_names_no_commit(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    write_history(root, ())
    assert head_sha(root) is None


def test_a_folder_in_no_repository_names_no_commit(tmp_path: Path) -> None:
    assert head_sha(tmp_path) is None


def test_a_subfolder_of_a_repository_reads_the_repository_head(tmp_path: Path) -> None:
    root, shas = _repository(tmp_path)
    (root / "sub" / "deeper").mkdir(parents=True)
    assert head_sha(root / "sub" / "deeper") == shas[-1]


def test_a_linked_worktree_reads_its_own_head_through_its_git_file(tmp_path: Path) -> None:
    root, shas = _repository(tmp_path)
    other = tmp_path / "other"
    git(root, "worktree", "add", "-q", "-b", "side", str(other), shas[0])
    assert (other / ".git").is_file()
    assert head_sha(other) == shas[0] and head_sha(root) == shas[-1]
    git(root, "pack-refs", "--all")  # the worktree's branch now lives in the shared packed-refs only
    assert head_sha(other) == shas[0]


def test_a_head_the_files_cannot_read_is_answered_as_git_answers_it(tmp_path: Path) -> None:
    root, _shas = _repository(tmp_path)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/.invalid\n", encoding="utf-8")  # reftable's placeholder
    assert head_sha(root) is None  # git finds no valid HEAD here either
