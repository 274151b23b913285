"""The concern screen's and clustering's cheaper sorts (projection/concern_screen.py `_leaves`, `_upper_halves`;
concern_clusters.py `_strongest_first`) against the orders they replace, written out here as the definition: a leaf
splits at the median of a three-key sort (leaf, projection, tie hash), and the spanning forest ranks its edges by
(cosine descending, smaller position, larger position, place). Inputs full of ties: repeated vectors, coarse
components, equal cosines, mirrored edges, and the packed keys at their 63-bit bound and one past it."""

from __future__ import annotations

import numpy
import numpy.typing
import pytest

from projection import concern_clusters, concern_screen
from projection.concern_screen import LEAF_UNITS, quantised

Ints = numpy.typing.NDArray[numpy.int64]


def _unit_rows(matrix: numpy.typing.NDArray[numpy.float64]) -> numpy.typing.NDArray[numpy.float32]:
    norms = numpy.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / numpy.where(norms == 0, 1, norms)).astype(numpy.float16).astype(numpy.float32)


def _tied_vectors(count: int, seed: int, kind: str) -> numpy.typing.NDArray[numpy.float32]:
    rng = numpy.random.default_rng(seed)
    if kind == "repeated":  # a few texts, each many times
        return _unit_rows(rng.standard_normal((5, 16))[rng.integers(0, 5, count)])
    if kind == "coarse":  # components in {-1, 0, 1}: many projections equal
        coarse = rng.integers(-1, 2, (count, 6)).astype(numpy.float64)
        coarse[:, 0] += coarse.sum(axis=1) == 0
        return _unit_rows(coarse)
    return _unit_rows(rng.standard_normal((count, 16)))


def _upper_by_three_key_sort(leaf: Ints, leaves: int, projection: Ints, tree: int, level: int) -> Ints:
    order = numpy.lexsort((concern_screen._tie_breaks(len(leaf), tree, level), projection, leaf))
    sizes = numpy.bincount(leaf, minlength=leaves)
    middles = numpy.concatenate([[0], numpy.cumsum(sizes)[:-1]]) + sizes // 2
    upper = numpy.empty(len(leaf), dtype=numpy.int64)
    upper[order] = numpy.arange(len(leaf)) >= middles[leaf[order]]
    return upper


def _leaves_by_three_key_sort(exact: numpy.typing.NDArray[numpy.float64], tree: int) -> list[list[int]]:
    """Each leaf's members, split level by level as the screen defines it."""
    count = len(exact)
    depth = 0
    while (count >> depth) > LEAF_UNITS:
        depth += 1
    projections = (exact @ concern_screen._direction_matrix(tree, depth, exact.shape[1])).astype(numpy.int64)
    leaf = numpy.zeros(count, dtype=numpy.int64)
    for level in range(depth):
        leaf = 2 * leaf + _upper_by_three_key_sort(leaf, 1 << level, projections[:, level], tree, level)
    return [sorted(numpy.flatnonzero(leaf == at).tolist()) for at in range(1 << depth)]


@pytest.mark.parametrize(("count", "kind"), [(2, "spread"), (LEAF_UNITS, "repeated"), (LEAF_UNITS + 1, "repeated"),
                                             (LEAF_UNITS + 2, "coarse"), (2 * LEAF_UNITS + 1, "coarse"),
                                             (1_537, "repeated"), (3_001, "spread"), (2_049, "coarse")])
def test_every_leaf_holds_the_units_the_three_key_sort_puts_there(count: int, kind: str) -> None:
    exact = quantised(_tied_vectors(count, count, kind))
    for tree in range(3):
        order, starts = concern_screen._leaves(exact, tree)
        found = [sorted(order[start:end].tolist()) for start, end in zip(starts[:-1], starts[1:], strict=True)]
        assert found == _leaves_by_three_key_sort(exact, tree)


def test_a_median_inside_a_run_of_equal_projections_is_decided_by_the_tie_hash() -> None:
    # Every projection equal: the packed key says nothing, the tie hash alone splits each leaf.
    leaf = numpy.repeat(numpy.arange(4), [7, 8, 1, 0]).astype(numpy.int64)
    projection = numpy.zeros(len(leaf))
    found = concern_screen._upper_halves(leaf, 4, projection, 5, 3)
    assert found.tolist() == _upper_by_three_key_sort(leaf, 4, projection.astype(numpy.int64), 5, 3).tolist()
    assert [int(found[leaf == at].sum()) for at in range(4)] == [4, 4, 1, 0]


@pytest.mark.parametrize("leaves", [2_047, 2_048])  # the packed key's span x leaves just under 2^63, and at it
def test_projections_too_wide_to_pack_split_as_those_that_pack(leaves: int) -> None:
    rng = numpy.random.default_rng(leaves)
    count = 4_000
    leaf = rng.integers(0, 9, count).astype(numpy.int64)
    # Integers across 2^52 + 1 values (exact in float64), with repeats so that medians fall inside equal runs.
    projection = rng.choice(numpy.array([-(2.0 ** 51), -3.0, 0.0, 0.0, 7.0, 2.0 ** 51]), count)
    assert (leaves * (2 ** 52 + 1) >= 1 << 63) == (leaves == 2_048)
    found = concern_screen._upper_halves(leaf, leaves, projection, 1, 0)
    assert found.tolist() == _upper_by_three_key_sort(leaf, leaves, projection.astype(numpy.int64), 1, 0).tolist()


def _by_four_keys(edges: tuple[Ints, Ints, Ints]) -> Ints:
    rows, columns, scores = edges
    return numpy.lexsort((numpy.arange(len(rows)), numpy.maximum(rows, columns), numpy.minimum(rows, columns),
                          -scores))


@pytest.mark.parametrize(("count", "span"), [(1 << 16, (1 << 31) - 1), (1 << 16, 1 << 31), (40, 3), (5, 1)])
def test_the_spanning_forest_ranks_edges_by_cosine_then_positions_then_place(count: int, span: int) -> None:
    # (1 << 16, ...): span x count^2 one under 2^63 (one packed sort) and at it (two sorts).
    rng = numpy.random.default_rng(span)
    rows = rng.integers(0, count, 3_000)
    columns = (rows + rng.integers(1, count, 3_000)) % count if count > 1 else rows
    # A few cosines spanning `span` values, so that many edges tie on cosine and positions decide.
    scores = rng.choice(numpy.array([0, 1, span // 2, span - 1]), 3_000) - (1 << 30)
    scores[:2] = [-(1 << 30), span - 1 - (1 << 30)]
    # Each edge also the other way round, with its cosine: equal keys, told apart by place.
    edges = (numpy.concatenate([rows, columns]), numpy.concatenate([columns, rows]),
             numpy.concatenate([scores, scores]))
    assert ((span * count * count) >= 1 << 63) == (span == 1 << 31)
    assert concern_clusters._strongest_first(count, edges).tolist() == _by_four_keys(edges).tolist()


def test_no_edges_rank_to_nothing() -> None:
    empty = numpy.zeros(0, dtype=numpy.int64)
    assert len(concern_clusters._strongest_first(10, (empty, empty, empty))) == 0
    assert all(len(part) == 0 for part in concern_clusters._spanning_forest(10, (empty, empty, empty)))
