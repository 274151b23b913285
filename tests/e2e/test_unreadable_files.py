"""A file or folder under `.theurian/` this user may not read, met by the real console script: named as not
readable (never "cannot write", never an unexpected failure or a traceback), with the command that shows its owner
and the one that gives it back.

The operating system's own refusal, never a simulated one: the folder or file is `chmod 000`. Root passes every
permission check through CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, so run as root each command runs under
`setpriv` with those two capabilities dropped, where the kernel refuses root as it refuses anyone else."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from projection.review_store import STORE_RELATIVE
from tests.projection.review_records import copy_fixture_lake
from tests.support.installation import THEURIAN_BIN, Installation
from theurian.text import shell_word

_UNPRIVILEGED = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search",
                 "--inh-caps", "-dac_override,-dac_read_search"]


def _prefix() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("run as root, which reads any file, and setpriv (util-linux) is not installed to drop that")
    return _UNPRIVILEGED


def _cli(installation: Installation, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_prefix(), str(THEURIAN_BIN), *args], env=installation.env, capture_output=True,
                          text=True, encoding="utf-8", timeout=120)


@pytest.fixture
def root(installation: Installation, tmp_path: Path) -> Path:
    """A registered project whose review store is built."""
    project = installation.new_project_in_process(tmp_path / "p", "p")
    copy_fixture_lake(project)
    installation.cli_in_process("review", "build", "--project", str(project))
    return project


def _denied(path: Path) -> Iterator[None]:
    mode = path.stat().st_mode
    path.chmod(0)
    try:
        yield
    finally:
        path.chmod(mode)


def _unreadable(path: Path) -> str:
    """What the CLI says of `path`, one this user may not read (the line after `theurian: `)."""
    user = pwd.getpwuid(os.geteuid()).pw_name
    word = shell_word(str(path))
    return (f"cannot read {path}: permission denied to this user ({user}); `ls -ld {word}` shows its owner and mode; "
            f"as root or its owner, `chown -R {user} {word} && chmod -R u+rwX {word}` gives it to this user (or run "
            "theurian as the user who owns it)")


@pytest.fixture
def unreadable_store(root: Path) -> Iterator[Path]:
    yield from _denied(root / STORE_RELATIVE)


@pytest.fixture
def unreadable_state(root: Path) -> Iterator[Path]:
    yield from _denied(root / ".theurian" / "state")


def test_a_read_command_over_a_store_this_user_may_not_read_names_it_not_readable(
        installation: Installation, root: Path, unreadable_store: None) -> None:
    # Said before: REVIEW_SEARCH_UNAVAILABLE_REFUSAL, whose `theurian review build` hides the cause.
    for command in (("review", "search", "lock"), ("review", "concerns")):
        refused = _cli(installation, *command, "--project", str(root))
        assert (refused.returncode, refused.stdout) == (1, "")
        assert refused.stderr.splitlines() == [f"theurian: {_unreadable(root / STORE_RELATIVE)}"]


def test_doctor_names_a_store_this_user_may_not_read_with_the_cure_for_that(
        installation: Installation, root: Path, unreadable_store: None) -> None:
    doctor = _cli(installation, "doctor")
    [row] = [line for line in doctor.stdout.splitlines() if "p: review store" in line]
    problem, _, cure = _unreadable(root / STORE_RELATIVE).partition("; ")
    assert row.split(None, 4)[-1] == f"not servable ({problem})  -> {cure}"  # said before: (unreadable: IOException)


def test_doctor_over_a_state_folder_this_user_may_not_read_names_it_on_its_rows_and_ends(
        installation: Installation, root: Path, unreadable_state: None) -> None:
    # Said before: a traceback (the findings row's stat, then the refusal's own wording, raised PermissionError).
    doctor = _cli(installation, "doctor")
    assert doctor.returncode == 1 and "Traceback" not in doctor.stderr, doctor.stderr
    problem = _unreadable(root / ".theurian" / "state").partition("; ")[0]
    for name in ("review store", "findings store", "knowledge state"):  # knowledge: said before, "damaged"
        [row] = [line for line in doctor.stdout.splitlines() if f"p: {name} " in line]
        assert problem in row, row


def test_a_build_over_a_lake_folder_this_user_may_not_read_says_it_cannot_read_it(
        installation: Installation, root: Path) -> None:
    [folder] = (root / ".theurian" / "review").glob("sha256-*")
    for _ in _denied(folder):
        built = _cli(installation, "review", "build", "--project", str(root))
    assert built.returncode == 1
    assert built.stderr.splitlines() == [f"theurian: {_unreadable(folder)}"]  # said before: "cannot write in …/"
