"""A write the file system refused for an ordinary reason is named as that condition, whichever layer reported it:
real errors from the operating system (/dev/full answers every write ENOSPC), SQLite and DuckDB, the last two
under a file size limit in a child process (a write past it fails with EFBIG, as a full disk fails with ENOSPC)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from theurian.disk_faults import storage_condition, storage_fault_text

_CHILD = """
import json, resource, signal, sqlite3, sys
import duckdb
from theurian.disk_faults import storage_fault_text
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))
said = {}
try:
    c = sqlite3.connect(sys.argv[1] + "/t.sqlite", isolation_level=None)
    c.execute("CREATE TABLE t (x)")
    c.executemany("INSERT INTO t VALUES (?)", [("x" * 100,)] * 2000)
except sqlite3.Error as exc:
    said["sqlite"] = [type(exc).__name__, storage_fault_text(exc)]
try:
    d = duckdb.connect(sys.argv[1] + "/t.duckdb")
    d.execute("CREATE TABLE t AS SELECT range AS x, repeat('x', 100) AS y FROM range(100000)")
    d.execute("CHECKPOINT")
except duckdb.Error as exc:
    said["duckdb"] = [type(exc).__name__, storage_fault_text(exc)]
print(json.dumps(said))
"""


def test_a_full_device_is_named_with_the_file_it_refused() -> None:
    fd = os.open("/dev/full", os.O_WRONLY)
    try:
        with pytest.raises(OSError) as raised:
            os.write(fd, b"x")
    finally:
        os.close(fd)
    raised.value.filename = "/dev/full"  # os.write has no name to give; the callers' OSErrors carry theirs
    assert storage_fault_text(raised.value) == ("cannot write /dev/full: no space left on the device; free space there "
                                                "(`df -h /dev` shows what is left), then run the command again")


def test_sqlite_and_duckdb_writes_past_a_file_size_limit_are_named_as_that_condition(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path)], capture_output=True, text=True,
                            encoding="utf-8", timeout=120, check=True)
    said = json.loads(result.stdout)
    assert said["sqlite"] == ["OperationalError", "cannot write a SQLite database under .theurian/state/ (or "
                              "SQLite's temp folder): the write failed (SQLite: disk I/O error): a full disk, a file "
                              "size limit or a failing device"]
    kind, text = said["duckdb"]
    assert text.startswith(f"cannot write {tmp_path}/t.duckdb")
    assert text.endswith(": the file would pass the file size limit (ulimit -f); raise it (`ulimit -f unlimited` in "
                         "the shell that runs theurian), then run the command again"), (kind, text)


def test_an_error_that_is_no_storage_condition_is_left_to_its_own_handler() -> None:
    assert storage_condition(OSError(13, "Permission denied")) is None
    assert storage_condition(ValueError("No space left on device")) is None  # only the engines' messages are read
    assert storage_fault_text(RuntimeError("boom")) is None


def test_a_write_inside_a_project_is_named_relative_to_its_root_and_one_outside_as_the_folder(
        tmp_path: Path) -> None:
    import errno

    from theurian.disk_faults import project_write_text

    root = tmp_path / "p"
    (root / ".theurian" / "proposals").mkdir(parents=True)
    inside = OSError(errno.EROFS, "Read-only file system", str(root / ".theurian" / "proposals" / "01NEVERMADE"))
    outside = OSError(errno.EROFS, "Read-only file system", str(tmp_path / "elsewhere"))
    said = ("cannot write in .theurian/proposals/: the file system is read-only; remount it read-write (`findmnt -T "
            ".theurian/proposals` names the mount), or work on a copy on a writable file system")
    assert project_write_text(inside, root, ".theurian/proposals") == said
    assert project_write_text(outside, root, ".theurian/proposals") == said
    absolute = project_write_text(inside, root, ".theurian/proposals", relative=False)
    assert absolute == said.replace(".theurian/proposals", str(root.resolve() / ".theurian/proposals"))
    assert project_write_text(OSError(errno.ENOENT, "No such file", str(root)), root, ".theurian/proposals") is None


def test_a_refused_read_is_named_not_readable_with_the_owner_and_mode_commands(tmp_path: Path) -> None:
    import errno

    from theurian.disk_faults import permission_text

    store = tmp_path / "my state" / "review-store.duckdb"
    refused = PermissionError(errno.EACCES, "Permission denied", str(store))
    said = permission_text(refused, reading=True)
    assert said is not None and said.startswith(f"cannot read {store}: permission denied to this user (")
    assert f"`ls -ld '{store}'` shows its owner and mode" in said
    assert f"`chown -R {_user()} '{store}' && chmod -R u+rwX '{store}'`" in said


def test_a_duckdb_permission_refusal_under_a_store_refusal_is_found_and_worded_as_a_read() -> None:
    """DuckDB's words, as it refused an ATTACH of a file chmod 000 (seen under setpriv: root bypasses it); the
    chain as `projection.review_store` raises it. tests/e2e/test_unreadable_files.py meets the real refusal."""
    import duckdb

    from projection.errors import ReviewStoreUnavailable
    from theurian.cli.error_text import unexpected_text
    from theurian.disk_faults import access_fault

    path = "/srv/p/.theurian/state/review-store.duckdb"
    engine = duckdb.IOException(f'IO Error: Cannot open file "{path}": Permission denied')
    try:
        try:
            raise engine
        except duckdb.Error as exc:
            raise ReviewStoreUnavailable("unreadable: IOException") from exc
    except ReviewStoreUnavailable as exc:
        found = access_fault(exc)
    assert found is not None and (found.errno, found.filename) == (13, path)
    assert access_fault(duckdb.IOException('IO Error: Cannot open file "/x": No such file')) is None
    said = unexpected_text(engine)  # one that escaped a command: its place, never "unexpected failure"
    assert said.startswith("cannot ") and path in said and "permission denied to this user" in said


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name
