from pathlib import Path

import pytest

from theurian.containment import resolve_inside
from theurian.errors import PathEscapeError


def test_a_plain_relative_path_resolves_under_the_root(tmp_path: Path) -> None:
    assert resolve_inside(tmp_path, ".theurian/state/x.db") == tmp_path.resolve() / ".theurian/state/x.db"


@pytest.mark.parametrize("relative", ["../outside", "a/../../outside", "/etc/passwd", "a/.."])
def test_climbing_or_absolute_paths_are_refused(tmp_path: Path, relative: str) -> None:
    with pytest.raises(PathEscapeError):
        resolve_inside(tmp_path, relative)


def test_a_symlinked_directory_pointing_outside_is_refused_even_for_a_leaf_that_does_not_exist(
    tmp_path: Path,
) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "state").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathEscapeError) as refused:
        resolve_inside(root, "state/not-yet-created.db")
    assert refused.value.relative == "state"  # the link that escapes, the one to mend
    assert str(outside) not in refused.value.message  # the escape target is never named


def test_a_symlinked_file_pointing_outside_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret").write_text("x", encoding="utf-8")
    (root / "store.db").symlink_to(tmp_path / "secret")
    with pytest.raises(PathEscapeError):
        resolve_inside(root, "store.db")


def test_a_symlink_that_stays_inside_the_root_is_followed(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    assert resolve_inside(tmp_path, "alias/file") == tmp_path.resolve() / "real/file"


def test_a_symlink_loop_is_refused_as_an_escape_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "state").symlink_to(tmp_path / "state")
    with pytest.raises(PathEscapeError):
        resolve_inside(tmp_path, "state/x.db")
