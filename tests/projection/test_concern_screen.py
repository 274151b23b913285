"""The concern clustering's neighbour screen (projection/concern_screen.py): the exact all-pairs answer while the
store fits one leaf, only true edges beyond it, the same answer for permuted units, in another process and on
another BLAS kernel, and a crowded region bounded by MAX_NEIGHBOURS edges a unit."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy
import numpy.typing
import pytest

from projection import concern_screen
from projection.concern_clusters import MAX_PART_UNITS, cluster, floor_of, part_labels
from projection.concern_screen import LEAF_UNITS, MAX_NEIGHBOURS, neighbour_edges, ppb_scale, quantised

THRESHOLD = 0.34
Matrix = numpy.typing.NDArray[numpy.float32]
Edge = tuple[int, int, int]


def _vectors(count: int, seed: int, *, planted: int = 0, dimension: int = 64) -> Matrix:
    """Random unit vectors, the first `planted` x 5 of them in tight groups of five (a recurring concern each)."""
    rng = numpy.random.default_rng(seed)
    vectors = rng.standard_normal((count, dimension))
    for group in range(planted):
        centre = rng.standard_normal(dimension) * 3
        vectors[group * 5:group * 5 + 5] = centre + rng.standard_normal((5, dimension))
    vectors /= numpy.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors.astype(numpy.float32)


def _edges(matrix: Matrix) -> set[Edge]:
    rows, columns, cosines = neighbour_edges(quantised(matrix), floor_of(THRESHOLD))
    return set(zip(rows.tolist(), columns.tolist(), cosines.tolist(), strict=True))


def _all_pairs(matrix: Matrix) -> set[Edge]:
    """The reference: every pair's exact cosine, each unit keeping its MAX_NEIGHBOURS best (cosine, then position)."""
    exact = quantised(matrix)
    cosines = numpy.rint(exact @ exact.T * ppb_scale(matrix.shape[1])).astype(numpy.int64)
    found = set()
    for row in range(len(matrix)):
        near = [(-int(cosines[row, column]), column) for column in range(len(matrix))
                if column != row and cosines[row, column] >= floor_of(THRESHOLD)]
        found |= {(row, column, -negated) for negated, column in sorted(near)[:MAX_NEIGHBOURS]}
    return found


def test_a_store_of_one_leaf_gets_exactly_the_all_pairs_screen() -> None:
    matrix = _vectors(LEAF_UNITS, 1, planted=8, dimension=8)  # 8 dimensions: many pairs over the threshold
    assert _edges(matrix) == _all_pairs(matrix)
    assert max(numpy.bincount([row for row, _, _ in _edges(matrix)])) == MAX_NEIGHBOURS  # the cap was reached


def test_past_one_leaf_every_edge_is_a_true_edge_and_no_unit_keeps_more_than_its_share() -> None:
    matrix = _vectors(LEAF_UNITS + 1, 2, planted=8, dimension=8)
    reference = _all_pairs(matrix)
    exact = quantised(matrix)
    scale = ppb_scale(matrix.shape[1])
    found = _edges(matrix)
    assert found and len(found & reference) > 0.5 * len(reference)
    for row, column, cosine in found:
        assert cosine == round(float(exact[row] @ exact[column]) * scale) >= floor_of(THRESHOLD)
    assert max(numpy.bincount([row for row, _, _ in found])) <= MAX_NEIGHBOURS


def test_the_forest_finds_every_cluster_of_three_the_all_pairs_screen_finds_on_a_sparse_store(
        monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = _vectors(3_000, 3, planted=40, dimension=128)
    found = cluster(matrix, THRESHOLD)
    monkeypatch.setattr(concern_screen, "LEAF_UNITS", len(matrix))  # one leaf: the all-pairs screen
    exact = cluster(matrix, THRESHOLD)
    # Every cluster big enough to be a concern; only pairs of strangers near the threshold may be missed.
    assert [group for group in exact if len(group) >= 3] == [group for group in found if len(group) >= 3]
    assert [list(range(group * 5, group * 5 + 5)) for group in range(40)] == found[:40]


def test_permuted_units_give_the_same_clusters() -> None:
    matrix = _vectors(2_000, 4, planted=30)
    order = numpy.random.default_rng(5).permutation(len(matrix))
    again = cluster(matrix[order], THRESHOLD)
    assert sorted(sorted(order[at] for at in group) for group in again) == cluster(matrix, THRESHOLD)
    assert len(again) >= 30


_DIGEST = """
import hashlib, numpy, sys
sys.path.insert(0, {root!r})
from projection.concern_clusters import MAX_PART_UNITS, cluster, floor_of, part_labels
from projection.concern_screen import neighbour_edges, quantised
matrix = numpy.load({path!r})
rows, columns, cosines = neighbour_edges(quantised(matrix), floor_of(0.34))
digest = hashlib.sha256(b"".join(a.astype("<i8").tobytes() for a in (rows, columns, cosines)))
digest.update(repr(cluster(matrix, 0.34)).encode())
print(digest.hexdigest())
"""


def _digest_elsewhere(tmp_path: Path, matrix: Matrix, **env: str) -> str:
    path = tmp_path / "matrix.npy"
    numpy.save(path, matrix)
    script = _DIGEST.format(root=str(Path(__file__).resolve().parents[2]), path=str(path))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120,
                          env={**os.environ, **env})
    return done.stdout.strip()


def test_another_process_and_another_blas_kernel_give_the_same_edges_and_clusters(tmp_path: Path) -> None:
    matrix = _vectors(1_500, 6, planted=20)
    rows, columns, cosines = neighbour_edges(quantised(matrix), floor_of(THRESHOLD))
    here = hashlib.sha256(b"".join(a.astype("<i8").tobytes() for a in (rows, columns, cosines)))
    here.update(repr(cluster(matrix, THRESHOLD)).encode())
    # OpenBLAS's oldest x86-64 kernels (SSE2, no FMA) against whatever this CPU picked, and two threads.
    assert _digest_elsewhere(tmp_path, matrix, PYTHONHASHSEED="7") == here.hexdigest()
    assert _digest_elsewhere(tmp_path, matrix, OPENBLAS_CORETYPE="Prescott", OPENBLAS_NUM_THREADS="2") \
        == here.hexdigest()


def test_a_crowded_region_keeps_at_most_max_neighbours_edges_a_unit_and_forms_no_concern() -> None:
    rng = numpy.random.default_rng(8)
    centre = rng.standard_normal(64)
    crowd = centre + 0.01 * rng.standard_normal((2_000, 64))  # 2,000 near-copies of one text: a bot
    crowd[:500] = centre  # and 500 exact copies, whose cosines all tie
    matrix = (crowd / numpy.linalg.norm(crowd, axis=1, keepdims=True)).astype(numpy.float32)
    rows, _, _ = neighbour_edges(quantised(matrix), floor_of(THRESHOLD))
    assert numpy.bincount(rows).max() == MAX_NEIGHBOURS and len(rows) == len(matrix) * MAX_NEIGHBOURS
    assert cluster(matrix, THRESHOLD) == []  # a part of more than MAX_PART_UNITS that never comes apart


def test_a_part_past_max_part_units_is_cut_into_its_tight_groups() -> None:
    rng = numpy.random.default_rng(9)
    shared = rng.standard_normal(64)
    centres = [shared + rng.standard_normal(64) for _ in range(3)]  # cosines of about 0.5 between them
    groups = [centre + 0.05 * rng.standard_normal((250, 64)) for centre in centres]
    # Texts between two groups tie them into one part of 790 at the threshold
    # (each leaning to one side, so each group's edges reach them, and they reach each other).
    bridges = [weight * centres[a] + (1 - weight) * centres[b] + 0.02 * rng.standard_normal((10, 64))
               for a, b in ((0, 1), (1, 2)) for weight in (0.6, 0.4)]
    vectors = numpy.vstack(groups + bridges)
    matrix = (vectors / numpy.linalg.norm(vectors, axis=1, keepdims=True)).astype(numpy.float32)
    edges = neighbour_edges(quantised(matrix), floor_of(THRESHOLD))
    assert set(part_labels(len(matrix), edges, THRESHOLD).tolist()) == {0} and len(matrix) > MAX_PART_UNITS
    found = cluster(matrix, THRESHOLD)
    assert found[:3] == [list(range(at, at + 250)) for at in (0, 250, 500)]
    assert found[3:] and all(min(group) >= 750 for group in found[3:])  # the bridges group among themselves


@pytest.mark.parametrize("cpus", [1, 3, 8])
def test_the_trees_give_the_same_edges_on_any_number_of_cpus(monkeypatch: pytest.MonkeyPatch, cpus: int) -> None:
    exact = quantised(_vectors(3 * LEAF_UNITS, 11, planted=5))
    expected = neighbour_edges(exact, floor_of(THRESHOLD))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)))
    found = neighbour_edges(exact, floor_of(THRESHOLD))
    assert all(numpy.array_equal(a, b) for a, b in zip(found, expected, strict=True))
