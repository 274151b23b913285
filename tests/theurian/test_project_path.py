"""The rename `theurian.project_path` prints for a path no project may have, pasted into bash."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from theurian.project_path import project_path_refusal, rename_cure


def test_a_utf8_path_is_not_refused(tmp_path: Path) -> None:
    assert project_path_refusal(tmp_path / "café", "theurian init {}") is None


def test_the_cure_renames_every_folder_that_is_not_utf8_outermost_first_missing_a_taken_name(tmp_path: Path) -> None:
    inner = os.fsencode(tmp_path) + b"/a\xfe/ok/b\xfd\xfc"
    os.makedirs(inner)
    os.mkdir(os.fsencode(tmp_path) + b"/a_")  # taken: mv onto it would move the folder inside it
    cure = rename_cure(Path(os.fsdecode(inner)), "printf %s {}")
    assert cure == (f"mv $'{tmp_path}/a\\xfe' {tmp_path}/a_-2 && mv $'{tmp_path}/a_-2/ok/b\\xfd\\xfc' "
                    f"{tmp_path}/a_-2/ok/b__ && printf %s {tmp_path}/a_-2/ok/b__")
    done = subprocess.run(["bash", "-c", cure], capture_output=True, timeout=30, check=True)
    assert done.stdout == os.fsencode(tmp_path / "a_-2/ok/b__") and (tmp_path / "a_-2/ok/b__").is_dir()
    assert sorted(os.listdir(tmp_path)) == ["a_", "a_-2"]
