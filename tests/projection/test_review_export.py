"""`review export --parquet`: the verified store as Parquet partitioned by the lake's repository folder, read back
by DuckDB with hive partitioning and compared with the store; refused, writing nothing, for a store it cannot
trust or a DIR it must not write."""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from evidence.records import repository_folder
from projection import review_export
from projection.errors import ReviewStoreUnavailable
from projection.review_build import build_review_store
from projection.review_export import KV_BUILD_ID, PARTITION_COLUMN, export_parquet
from projection.review_layout import RECORD_COLUMNS
from projection.review_store import store_path
from tests.projection.review_records import new_project, pull_request, review, tamper_with_store, thread, write_lake
from tests.support.installation import THEURIAN_BIN, Installation
from theurian.errors import EXIT_FAILED, UsageError

# Case variants of one repository (GitHub matches names case-insensitively), a name that is all dots, and one
# holding every other character a name may hold: each a path hazard if the name itself were the folder.
ACME, ACME_LOWER, DOTS, MIXED = "Acme/Order-Service", "acme/order-service", "dash-1/...", "x/a.b_c-D"


def _project(tmp_path: Path) -> Path:
    root = new_project(tmp_path / "p")
    write_lake(root, [
        pull_request(ACME, 1, "PR_a1", title="lock order", body="take the lock first"),
        thread(ACME, 1, "PRRT_a1", bodies=("a slow read holds it", "moved the read out")),
        pull_request(ACME_LOWER, 2, "PR_a2", title="the same repository, spelled lower-case"),
        review(DOTS, 3, "PRR_d3", body="looks fine"),
        thread(MIXED, 4, "PRRT_m4", bodies=("naming: 'quotes' and \"doubles\" survive",), path="src/it's.py"),
    ])
    build_review_store(root)
    (tmp_path / "exports").mkdir()
    return root


def _store_rows(root: Path, query: str) -> list[tuple[object, ...]]:
    with duckdb.connect(str(store_path(root)), read_only=True) as connection:
        return connection.execute(query).fetchall()


def _export_rows(target: Path, table: str, query: str) -> list[tuple[object, ...]]:
    with duckdb.connect() as connection:
        connection.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet('{target}/{table}/**/*.parquet', "
                           "hive_partitioning = true)")
        return connection.execute(query).fetchall()


def _store_counts_per_folder(root: Path, table: str) -> dict[str, int]:
    join = "" if table == "records" else " JOIN records USING (ordinal)"
    counts: dict[str, int] = {}
    for name, count in _store_rows(root, f"SELECT repository, count(*) FROM {table}{join} GROUP BY ALL"):
        assert isinstance(name, str) and isinstance(count, int)
        counts[repository_folder(name)] = counts.get(repository_folder(name), 0) + count
    return counts


def test_an_export_reads_back_in_duckdb_with_the_stores_rows_counted_per_table_and_repository(
        tmp_path: Path) -> None:
    root = _project(tmp_path)
    summary = export_parquet(root, tmp_path / "exports" / "export")
    for table in ("records", "texts", "vectors"):
        stored = _store_rows(root, f"SELECT count(*) FROM {table}")[0][0]
        assert _export_rows(tmp_path / "exports" / "export", table, "SELECT count(*) FROM t") == [(stored,)]
        assert summary.rows[table] == stored
        exported = _export_rows(tmp_path / "exports" / "export", table,
                                f"SELECT {PARTITION_COLUMN}, count(*) FROM t GROUP BY ALL")
        assert dict(exported) == _store_counts_per_folder(root, table)  # type: ignore[arg-type]
    assert summary.rows == {"records": 5, "texts": 8, "vectors": 3}
    folders = _export_rows(tmp_path / "exports" / "export", "records",
                           "SELECT repository, repository_folder, count(*) FROM t GROUP BY ALL ORDER BY ALL")
    assert folders == sorted([(ACME, repository_folder(ACME), 2), (ACME_LOWER, repository_folder(ACME), 1),
                              (DOTS, repository_folder(DOTS), 1), (MIXED, repository_folder(MIXED), 1)])
    assert summary.repositories == 3  # both spellings of Acme's name are one repository, one partition
    assert sorted(os.listdir(tmp_path / "exports" / "export" / "records")) == sorted(
        f"{PARTITION_COLUMN}={repository_folder(name)}" for name in (ACME, DOTS, MIXED))


def test_the_exported_rows_are_the_stores_rows_and_each_file_carries_the_build_id(tmp_path: Path) -> None:
    root = _project(tmp_path)
    target = tmp_path / "exports" / "export"
    summary = export_parquet(root, target)
    columns = ", ".join(RECORD_COLUMNS)
    assert _export_rows(target, "records", f"SELECT {columns} FROM t ORDER BY ordinal") == \
        _store_rows(root, f"SELECT {columns} FROM records ORDER BY ordinal")
    assert _export_rows(target, "texts", "SELECT ordinal, position, channel, body FROM t "
                        "ORDER BY ordinal, position") == \
        _store_rows(root, "SELECT ordinal, position, channel, body FROM texts ORDER BY ordinal, position")
    assert _export_rows(target, "vectors", "SELECT ordinal, vector FROM t ORDER BY ordinal") == \
        _store_rows(root, "SELECT ordinal, vector FROM vectors ORDER BY ordinal")
    keys = _store_rows(root, "SELECT t.ordinal, r.record_key FROM texts t JOIN records r USING (ordinal) ORDER BY 1")
    assert _export_rows(target, "texts", "SELECT ordinal, record_key FROM t ORDER BY 1") == keys
    assert summary.build_id == _store_rows(root, "SELECT build_id FROM build_stamp")[0][0]
    with duckdb.connect() as connection:
        metadata = connection.execute(
            f"SELECT file_name, value FROM parquet_kv_metadata('{target}/*/*/*.parquet') "
            "WHERE key = ?", [KV_BUILD_ID.encode()]).fetchall()
    files = list(target.glob("*/*/*.parquet"))
    assert len(files) == 3 + 3 + 3  # each table in each repository
    assert sorted(name for name, _ in metadata) == sorted(str(f) for f in files)
    assert {value for _, value in metadata} == {summary.build_id.encode()}


def test_a_folder_name_as_duckdb_computes_it_is_the_lakes_repository_folder(tmp_path: Path) -> None:
    root = _project(tmp_path)
    target = tmp_path / "exports" / "export"
    export_parquet(root, target)
    pairs = _export_rows(target, "records", "SELECT DISTINCT repository, repository_folder FROM t")
    assert all(folder == repository_folder(name) for name, folder in pairs) and len(pairs) == 4


def test_an_empty_existing_folder_is_exported_into(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (tmp_path / "exports" / "export").mkdir()
    export_parquet(root, tmp_path / "exports" / "export")
    assert sorted(os.listdir(tmp_path / "exports" / "export")) == ["records", "texts", "vectors"]


# Made afresh in each test: a raised exception keeps its traceback, whose frames hold DuckDB's cursor, and a
# parameter's value lives until the process ends, where nanobind then reports the cursor as leaked.
@pytest.mark.parametrize("duckdb_says", [lambda: RuntimeError("Query interrupted"),
                                         lambda: duckdb.InterruptException("INTERRUPT Error: Interrupted!")],
                         ids=["Query interrupted", "InterruptException"])
def test_a_ctrl_c_mid_copy_is_an_interrupt_not_an_unexpected_failure_and_nothing_is_published(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, duckdb_says: Callable[[], Exception]) -> None:
    """DuckDB answers a Ctrl-C (or a SIGTERM taken as one) in a running COPY with its own error: exit 1 and
    "unexpected failure (RuntimeError: Query interrupted)" where `review build` exits 130."""
    root = _project(tmp_path)

    def interrupted(*_: object) -> None:
        try:
            signal.raise_signal(signal.SIGINT)  # noted by the export's handler, as a Ctrl-C inside DuckDB is
        except KeyboardInterrupt:
            pass  # ... which DuckDB turns into its own error
        raise duckdb_says()

    monkeypatch.setattr(review_export, "_write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        export_parquet(root, tmp_path / "exports" / "export")
    assert sorted(os.listdir(tmp_path / "exports")) == []  # no export, no temp folder
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_project_with_no_store_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    (tmp_path / "exports").mkdir()
    with pytest.raises(ReviewStoreUnavailable) as refused:
        export_parquet(root, tmp_path / "exports" / "export")
    assert refused.value.reason == "absent"
    assert refused.value.message == "the review store cannot be served (absent); run `theurian review build`"
    assert sorted(os.listdir(tmp_path / "exports")) == []


def test_a_damaged_store_is_refused_as_review_search_refuses_it_and_nothing_is_written(tmp_path: Path) -> None:
    root = _project(tmp_path)
    tamper_with_store(root, ["UPDATE texts SET body = 'planted' WHERE ordinal = 0"])
    with pytest.raises(ReviewStoreUnavailable) as refused:
        export_parquet(root, tmp_path / "exports" / "export")
    assert refused.value.reason == "damaged: its rows are not the rows its build stamped"
    assert sorted(os.listdir(tmp_path / "exports")) == []


def test_a_non_empty_folder_is_refused_by_name_and_left_as_it_was(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (tmp_path / "exports" / "export").mkdir()
    (tmp_path / "exports" / "export" / "mine.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(UsageError, match=f"^{tmp_path / 'exports' / 'export'} exists and is not empty"):
        export_parquet(root, tmp_path / "exports" / "export")
    assert os.listdir(tmp_path / "exports" / "export") == ["mine.txt"]
    assert sorted(os.listdir(tmp_path / "exports")) == ["export"]


def test_a_file_in_the_folders_place_is_refused_by_name(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (tmp_path / "exports" / "export").write_text("a file", encoding="utf-8")
    with pytest.raises(UsageError, match="exists and is not a folder"):
        export_parquet(root, tmp_path / "exports" / "export")


def test_a_folder_inside_the_theurian_folder_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path)
    before = sorted(os.listdir(root / ".theurian/state"))
    with pytest.raises(UsageError, match="is inside .theurian/"):
        export_parquet(root, root / ".theurian/state/export")
    assert sorted(os.listdir(root / ".theurian/state")) == before


def test_a_missing_parent_folder_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with pytest.raises(UsageError, match="does not exist"):
        export_parquet(root, tmp_path / "no" / "export")


def test_an_export_failing_before_its_rename_leaves_nothing_under_dir(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path)

    def failing_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    with monkeypatch.context() as patched, pytest.raises(OSError, match="Input/output error"):
        patched.setattr(os, "fsync", failing_fsync)  # the disk fails after DuckDB wrote every file
        export_parquet(root, tmp_path / "exports" / "export")
    assert sorted(os.listdir(tmp_path / "exports")) == []
    export_parquet(root, tmp_path / "exports" / "export")  # and the next export writes the whole of it
    assert sorted(os.listdir(tmp_path / "exports")) == ["export"]


def test_the_cli_exports_and_refuses_a_non_empty_folder_in_one_line(tmp_path: Path,
                                                                   installation: Installation) -> None:
    root = _project(tmp_path)
    target = str(tmp_path / "exports" / "export")
    done = installation.cli("review", "export", "--parquet", target, "--project", str(root))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("exported review store build ")
    assert "5 records, 8 texts, 3 vectors" in done.stdout
    again = installation.cli("review", "export", "--parquet", target, "--project", str(root))
    assert again.returncode != 0
    assert again.stderr.strip().splitlines() == [
        f"theurian: {tmp_path / 'exports' / 'export'} exists and is not empty: export to a new or empty folder"]
    as_json = installation.cli("review", "export", "--parquet", str(tmp_path / "exports" / "j"), "--json",
                               "--project", str(root))
    build_id = _store_rows(root, "SELECT build_id FROM build_stamp")[0][0]
    assert json.loads(as_json.stdout)["summary"] == {
        "target": str(tmp_path / "exports" / "j"), "buildId": build_id,
        "rows": {"records": 5, "texts": 8, "vectors": 3}, "repositories": 3}
    assert done.stdout.split()[4] == build_id
    bare = new_project(tmp_path / "bare")
    absent = installation.cli("review", "export", "--parquet", str(tmp_path / "exports" / "e2"), "--project", str(bare))
    assert absent.returncode != 0 and "Traceback" not in absent.stderr
    # Its cure pasteable from where the operator stands (`theurian.cli.pasteable`): the project they named.
    assert ("the review store cannot be served (absent); run "
            f"`theurian review build --project {bare.resolve()}`") in absent.stderr


def test_a_link_in_the_folders_place_is_refused_even_to_an_empty_folder(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "exports" / "export").symlink_to(tmp_path / "empty")
    with pytest.raises(UsageError, match="exists and is not a folder"):
        export_parquet(root, tmp_path / "exports" / "export")
    assert os.listdir(tmp_path / "empty") == []


def test_a_temp_folder_a_killed_export_left_beside_dir_is_swept_by_the_next(tmp_path: Path) -> None:
    root = _project(tmp_path)
    leftover = tmp_path / "exports" / ".export.abc123.building"
    (leftover / "records").mkdir(parents=True)
    export_parquet(root, tmp_path / "exports" / "export")
    assert sorted(os.listdir(tmp_path / "exports")) == ["export"]


def test_a_table_with_no_rows_keeps_its_folder_and_has_no_file(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, [pull_request(ACME, 1, "PR_only")])  # a pull request has texts and no embedding
    build_review_store(root)
    (tmp_path / "exports").mkdir()
    summary = export_parquet(root, tmp_path / "exports" / "export")
    assert summary.rows["vectors"] == 0
    assert os.listdir(tmp_path / "exports" / "export" / "vectors") == []
    assert len(os.listdir(tmp_path / "exports" / "export" / "records")) == 1


def test_an_empty_folder_exported_into_keeps_its_mode_and_a_new_one_gets_the_umasks_default(tmp_path: Path) -> None:
    root = _project(tmp_path)
    shared = tmp_path / "exports" / "shared"
    shared.mkdir()
    os.chmod(shared, 0o2775)  # a shared folder: group-writable, new files in the folder's group
    export_parquet(root, shared)
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o2775
    old = os.umask(0o022)
    try:
        export_parquet(root, tmp_path / "exports" / "new")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "exports" / "new").st_mode) == 0o755
    assert stat.S_IMODE(os.stat(tmp_path / "exports" / "new" / "records").st_mode) == 0o755


def _limited_to(size: int) -> Callable[[], None]:
    def limit() -> None:  # a write past `size` fails with EFBIG (SIGXFSZ ignored), as a full disk fails with ENOSPC
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return limit


def test_a_target_the_disk_refuses_is_named_as_the_targets_fault_not_the_stores(tmp_path: Path,
                                                                                installation: Installation) -> None:
    root = _project(tmp_path)
    target = tmp_path / "exports" / "export"
    result = subprocess.run(
        [str(THEURIAN_BIN), "review", "export", "--parquet", str(target), "--project", str(root)],
        env=installation.env, capture_output=True, text=True, encoding="utf-8", timeout=120,
        preexec_fn=_limited_to(512))  # the store is only read; each Parquet file is larger than this
    assert result.returncode == EXIT_FAILED
    assert result.stderr.splitlines() == [
        f"theurian: cannot write the export to {target}: the file would pass the file size limit (ulimit -f); "
        "nothing was published there and the review store is unchanged"]
    assert os.listdir(tmp_path / "exports") == []
    export_parquet(root, target)  # the store was fine all along
