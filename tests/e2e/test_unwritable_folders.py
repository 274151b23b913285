"""A folder the file system will not let the CLI write — under `.theurian/` or the installation's home — is refused on
one line naming the folder (and the target, never the temp file beside it), the condition and the cure: permission
denied to this user, an immutable flag, a read-only file system, a full disk. The real console script's code runs
in a child process whose `tempfile.mkstemp` (and `mkdtemp`) refuses the one folder named, as the operating system
would; for a full disk its temp file is real and every write to it goes to /dev/full, so the ENOSPC is the operating
system's own."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.installation import Installation
from theurian.errors import EXIT_FAILED

_CHILD = """
import errno, json, os, sys, tempfile
folder, code = json.loads(sys.argv[1])
made = tempfile.mkstemp

def mkstemp(suffix=None, prefix=None, dir=None, text=False):
    if dir is None or os.path.realpath(dir) != folder:
        return made(suffix, prefix, dir, text)
    if code == errno.ENOSPC:  # a real temp file whose writes the device refuses, as a full disk does
        fd, name = made(suffix, prefix, dir, text)
        full = os.open("/dev/full", os.O_WRONLY)
        os.dup2(full, fd)
        os.close(full)
        return fd, name
    raise OSError(code, os.strerror(code), os.path.join(dir, (prefix or "") + "k2x9_q0a" + (suffix or "")))

def mkdtemp(suffix=None, prefix=None, dir=None):
    if dir is None or os.path.realpath(dir) != folder:
        return made_folder(suffix, prefix, dir)
    raise OSError(code, os.strerror(code), os.path.join(dir, (prefix or "") + "k2x9_q0a" + (suffix or "")))

made_folder = tempfile.mkdtemp
tempfile.mkstemp, tempfile.mkdtemp = mkstemp, mkdtemp
sys.argv = ["theurian", *sys.argv[2:]]
from theurian.cli.entry import run
run()
"""


def _refused_in(installation: Installation, folder: Path, code: int, *args: str) -> str:
    """The one line the CLI printed for `args` when writing in `folder` failed with `code`; checks the exit code,
    that it is the only line, and that no temp file's name and no traceback reached the user."""
    result = subprocess.run([sys.executable, "-c", _CHILD, json.dumps([os.path.realpath(folder), code]), *args],
                            env=installation.env, capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert result.returncode == EXIT_FAILED, (result.stdout, result.stderr)
    line, = result.stderr.splitlines()
    assert "Traceback" not in result.stderr and "k2x9_q0a" not in line and ".tmp" not in line
    assert ".building" not in line
    return line.removeprefix("theurian: ")


@pytest.fixture
def root(installation: Installation, tmp_path: Path) -> Path:
    return installation.new_project(tmp_path / "p", "p")


def test_a_project_folder_this_user_may_not_write_names_the_folder_and_the_chown(
        installation: Installation, root: Path) -> None:
    # Said before: "Permission denied: ROOT/.theurian/.config.toml.k2x9_q0a.tmp", a temp file and no cure.
    import pwd

    user = pwd.getpwuid(os.geteuid()).pw_name
    said = _refused_in(installation, root / ".theurian", errno.EACCES, "review", "allow", "acme/x", "--project",
                       str(root))
    assert said == (f"cannot write config.toml in {root}/.theurian/: permission denied to this user ({user}); as "
                    f"root or its owner, `chown -R {user} {root}/.theurian` gives it to this user (or run theurian "
                    "as the user who owns it)")


def test_an_immutable_installation_folder_names_the_flag_and_the_chattr(installation: Installation) -> None:
    # Said before: "Operation not permitted: HOME/state/.mcp-token.k2x9_q0a.tmp".
    installation.cli_in_process("auth", "rotate")
    state = installation.state_dir
    said = _refused_in(installation, state, errno.EPERM, "auth", "rotate")
    assert said == (f"cannot write mcp-token in {state}/: the operation is not permitted (an immutable or "
                    f"append-only flag refuses even root: `lsattr -d {state}` shows it); as root, `chattr -i -a "
                    f"{state}` clears it")


def test_a_read_only_state_folder_names_the_store_and_the_remount(installation: Installation, root: Path) -> None:
    # Said before: "cannot write ROOT/.theurian/state/.review-store.duckdb.k2x9_q0a.building: the file system is
    # read-only", the temp file and no cure.
    state = root / ".theurian" / "state"
    said = _refused_in(installation, state, errno.EROFS, "review", "build", "--project", str(root))
    assert said == (f"cannot write review-store.duckdb in {state}/: the file system is read-only; remount it "
                    f"read-write (`findmnt -T {state}` names the mount), or work on a copy on a writable file system")


@pytest.mark.parametrize("where", ["project", "home"])
def test_a_full_disk_names_the_target_folder_not_the_temp_file(installation: Installation, root: Path,
                                                               where: str) -> None:
    # Said before: "cannot write a file: no space left on the device" (a write through the handle names no file).
    folder, args, target = {
        "project": (root / ".theurian", ("review", "allow", "acme/x", "--project", str(root)), "config.toml"),
        "home": (installation.home / "config", ("project", "register", str(root.parent / "q")), "projects.toml"),
    }[where]
    (root.parent / "q").mkdir()
    installation.cli_in_process("init", str(root.parent / "q"))
    said = _refused_in(installation, folder, errno.ENOSPC, *args)
    assert said == (f"cannot write {target} in {folder}/: no space left on the device; free space there (`df -h "
                    f"{folder}` shows what is left), then run the command again")
    assert not [p.name for p in folder.iterdir() if p.name.startswith(f".{target}.")]  # the temp is gone


@pytest.mark.parametrize("name", [".config.toml._nbwafxt.tmp", ".projects.toml.2zxc09p6.tmp", ".review.salt.abcd1234",
                                  ".review-store.duckdb.v3v3mal5.building", ".digest.json.4242.tmp"])
def test_each_temp_name_a_write_makes_is_named_by_its_target(tmp_path: Path, name: str) -> None:
    from theurian.disk_faults import written_place

    target = name[1:].rsplit(".", 2 if name.endswith((".tmp", ".building")) else 1)[0]
    assert written_place(tmp_path / name) == (f"{target} in {tmp_path}/", tmp_path)
    assert written_place(tmp_path / ".gitignore") == (f"{tmp_path}/.gitignore", tmp_path)


def test_a_file_inside_a_builds_temp_folder_is_named_by_the_store_and_its_folder(tmp_path: Path) -> None:
    from theurian.disk_faults import written_place

    inside = tmp_path / ".review-store.duckdb.v3v3mal5.building" / "review-store.duckdb"
    assert written_place(inside) == (f"review-store.duckdb in {tmp_path}/", tmp_path)
