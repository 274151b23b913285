"""`theurian review build` shapes records in forked worker processes on a large lake; the store it builds, the
files it skips and the order it reports them in are exactly those of the single-process build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb

from projection.review_build import build_review_store
from projection.review_scan import _pack, unpack
from projection.review_store import DIGEST_TABLES, rows_digest, store_path
from tests.projection.review_records import new_project, pull_request, review, thread, write_lake

_CHILD = """
import sys
from pathlib import Path
import projection.review_scan as scan
from projection.review_build import build_review_store

pools = []
class CountingPool(scan.ProcessPoolExecutor):
    def __init__(self, workers, **options):
        pools.append(workers)
        super().__init__(workers, **options)

scan.ProcessPoolExecutor = CountingPool
scan.CHUNK_FILES = 3  # many chunks from a small lake, so both workers get several
summary = build_review_store(Path(sys.argv[1]), workers=2)
assert pools == [2], pools
print(summary.describe())
"""


def _lake(root: Path) -> Path:
    records = []
    for index in range(40):
        repository, number = f"Org/Repo-{index % 3}", index % 7 + 1
        word = ("lock", "retry", "Cache\u00a0Ä", "a\x00b")[index % 4]
        records += [pull_request(repository, number, f"PR_w{index}", title=f"{word} {index}", body=word * 3),
                    review(repository, number, f"PRR_w{index}", body=f"{word} review"),
                    thread(repository, number, f"PRRT_w{index}", bodies=(word, f"{word} reply", ""))]
    paths = write_lake(new_project(root), records)
    lake = root / ".theurian" / "review"
    for bad in paths[5::37]:  # a few corrupt files, spread over several chunks
        (lake / bad).write_bytes(b'{"kind": "pull-request"')
    (lake / Path(paths[0]).parent / "not-a-record.json").write_bytes(b"{}")
    return root


def _tables(root: Path) -> dict[str, list[tuple[object, ...]]]:
    with duckdb.connect(str(store_path(root)), read_only=True) as connection:
        return {name: connection.execute(f"SELECT * FROM {name} ORDER BY {order}").fetchall()  # noqa: S608
                for name, _, order in DIGEST_TABLES}


def _stamped(root: Path) -> tuple[object, ...]:
    with duckdb.connect(str(store_path(root)), read_only=True) as connection:
        row = connection.execute("SELECT row_count, row_digest FROM build_stamp").fetchone()
        assert row is not None
        assert rows_digest(connection) == tuple(row)  # the lines the build digested are the rows it loaded
        return tuple(row)


def test_two_forked_workers_build_exactly_the_single_process_store(tmp_path: Path) -> None:
    single, parallel = _lake(tmp_path / "single"), _lake(tmp_path / "parallel")
    expected = build_review_store(single, workers=1)
    # A fresh process: the test runner's own threads would (rightly) keep the build from forking.
    child = subprocess.run([sys.executable, "-c", _CHILD, str(parallel)], capture_output=True, check=False,
                           cwd=Path(__file__).resolve().parents[2], timeout=300)
    assert child.returncode == 0, child.stderr.decode()
    assert child.stdout.decode().strip() == expected.describe()
    assert expected.records == 120 - len(range(5, 120, 37)) and len(expected.skipped) == 5
    assert _tables(parallel) == _tables(single)
    assert _stamped(parallel) == _stamped(single)


def test_words_cross_the_process_boundary_whole_even_holding_nul() -> None:
    for words in ({"lock", "retry"}, {"a\x00b", "c"}, {"\x00"}, {""}, set()):
        assert sorted(unpack(_pack(words))) == sorted(words)
