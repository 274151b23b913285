from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from projection.errors import ReviewStoreUnavailable
from projection.review_build import build_review_store
from projection.review_digest import row_line
from projection.review_layout import VECTOR_COLUMNS
from projection.review_store import open_store
from projection.review_vectors import decode_vectors, encode_vector, vector_line
from tests.projection.review_records import new_project, pull_request, review, tamper_with_store, thread, write_lake
from tests.support.fake_model import write_fake_model
from theurian.embedding import load_model
from theurian.installation import installation_config_path


def _stored(root: Path) -> dict[str, numpy.typing.NDArray[numpy.float32]]:
    cursor = open_store(root).cursor()
    rows = cursor.execute(
        "SELECT r.record_key, v.vector FROM s.vectors v JOIN s.records r ON r.ordinal = v.ordinal ORDER BY v.ordinal"
    ).fetchall()
    vectors = decode_vectors([str(vector) for _, vector in rows], load_model().identity.dimension)
    return {str(key): vectors[index] for index, (key, _) in enumerate(rows)}


def test_a_build_embeds_each_thread_and_each_review_with_a_body_and_no_pull_request(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, [
        pull_request("o/r", 1, "PR_1", body="a body"),
        review("o/r", 1, "PRR_text", body="please take the locks in one order"),
        review("o/r", 1, "PRR_empty", body=""),
        thread("o/r", 1, "PRRT_1", bodies=("the token is printed", "in the debug log")),
    ])
    summary = build_review_store(root)
    stored = _stored(root)
    assert sorted(stored) == ["PRRT_1", "PRR_text"]
    expected = load_model().embed(["please take the locks in one order", "the token is printed\nin the debug log"])
    assert numpy.allclose(stored["PRR_text"], expected[0], atol=2e-3)  # stored as float16
    assert numpy.allclose(stored["PRRT_1"], expected[1], atol=2e-3)
    assert (summary.embedded, summary.reused) == (2, 0)


def test_a_rebuild_embeds_only_the_records_whose_file_changed(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, [thread("o/r", 1, "PRRT_a", bodies=("first",)), thread("o/r", 2, "PRRT_b", bodies=("second",))])
    build_review_store(root)
    before = _stored(root)
    write_lake(root, [thread("o/r", 2, "PRRT_b", bodies=("second, edited",)), thread("o/r", 3, "PRRT_c")])
    summary = build_review_store(root)
    after = _stored(root)
    assert (summary.embedded, summary.reused) == (2, 1)
    assert numpy.array_equal(after["PRRT_a"], before["PRRT_a"])
    assert not numpy.allclose(after["PRRT_b"], before["PRRT_b"])


def _built_with_another_model(tmp_path: Path) -> Path:
    """A project whose store was built with a fake model, the installation back on the bundled one since."""
    root = new_project(tmp_path / "p")
    write_lake(root, [thread("o/r", 1, "PRRT_a", bodies=("a lock",))])
    config = installation_config_path()
    config.parent.mkdir(parents=True)
    config.write_text(f'embedding_model = "{write_fake_model(tmp_path / "fake")}"\n', encoding="utf-8")
    build_review_store(root)
    config.unlink()
    return root


def test_a_store_built_with_another_model_is_refused_as_superseded(tmp_path: Path) -> None:
    root = _built_with_another_model(tmp_path)
    with pytest.raises(ReviewStoreUnavailable) as refused:
        open_store(root)
    assert refused.value.reason == "superseded: built with another embedding model"


def test_a_rebuild_after_the_model_changed_embeds_everything_afresh(tmp_path: Path) -> None:
    root = _built_with_another_model(tmp_path)
    summary = build_review_store(root)
    assert (summary.embedded, summary.reused) == (1, 0)
    assert open_store(root) is not None


def test_a_tampered_vector_fails_the_stamp_digest(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, [thread("o/r", 1, "PRRT_a", bodies=("a lock",)), thread("o/r", 2, "PRRT_b", bodies=("log",))])
    build_review_store(root)
    tamper_with_store(root, ["UPDATE vectors SET vector = (SELECT max(vector) FROM vectors)"])
    with pytest.raises(ReviewStoreUnavailable) as refused:
        open_store(root)
    assert refused.value.reason == "damaged: its rows are not the rows its build stamped"


def test_importing_the_build_and_the_tool_registry_leaves_the_build_free_to_fork() -> None:
    # numpy's BLAS starts threads on import; `review build` imports the tool registry for a refusal's words, and a
    # process with a second thread never forks its lake readers (theurian.forked.fork_is_safe).
    probe = ("import serve.tools, projection.review_build, theurian.cli.main\n"
             "from theurian.forked import fork_is_safe\n"
             "print(fork_is_safe())\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                            encoding="utf-8")
    assert (result.returncode, result.stdout.strip()) == (0, "True"), result.stderr


def test_stored_vectors_decode_as_each_row_s_strict_base64_read_as_float16() -> None:
    rows = [encode_vector(vector) for vector in numpy.random.default_rng(5).standard_normal((7, 256))]
    expected = numpy.stack([numpy.frombuffer(base64.b64decode(row, validate=True), dtype="<f2") for row in rows])
    decoded = decode_vectors(rows, 256)
    assert decoded.dtype == numpy.float32 and numpy.array_equal(decoded, expected.astype(numpy.float32))
    assert decode_vectors([], 256).shape == (0, 256)


@pytest.mark.parametrize("damage", [
    lambda row: row[:-4],  # a value short
    lambda row: row + "AAAA",  # a value long
    lambda row: row[:-1] + "A",  # no padding: a byte long
    lambda row: row[:-2] + "==",  # padding where a value's byte is
    lambda row: "*" + row[1:],  # outside the alphabet
    lambda row: "é" + row[1:],  # not ASCII
    lambda row: row[:100] + "\n" + row[101:],  # a line break
])
def test_a_stored_vector_that_is_not_one_of_its_model_s_is_refused_as_damaged(damage: Any) -> None:
    rows = [encode_vector(vector) for vector in numpy.eye(3, 256, dtype=numpy.float32)]
    with pytest.raises(ReviewStoreUnavailable, match="damaged"):
        decode_vectors([rows[0], damage(rows[1]), rows[2]], 256)


def test_two_damaged_rows_whose_lengths_make_up_for_each_other_are_refused() -> None:
    short, long = (encode_vector(vector) for vector in numpy.eye(2, 256, dtype=numpy.float32))
    with pytest.raises(ReviewStoreUnavailable, match="damaged"):
        decode_vectors([short[:-4] + "AA==", long[:-1] + "A"], 256)  # 511 bytes and 513


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=2**62), st.text())
def test_a_vector_line_is_the_row_line_of_its_row_byte_for_byte(ordinal: int, stored: str) -> None:
    assert vector_line(ordinal, stored) == row_line(VECTOR_COLUMNS, (ordinal, stored))
