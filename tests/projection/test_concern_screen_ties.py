"""Ties in the concern screen's forest and clustering (projection/concern_screen.py, concern_clusters.py): identical
vectors, whose projections tie on every direction, are not cut into leaf-sized clusters the all-pairs screen never
forms, and an exactly tied merge is decided by the store's order, as docs/review-concerns.md says."""

from __future__ import annotations

import numpy
import pytest

from projection import concern_screen
from projection.concern_clusters import MAX_PART_UNITS, _Means, cluster
from projection.concern_screen import LEAF_UNITS

THRESHOLD = 0.34


def _copies(count: int) -> numpy.typing.NDArray[numpy.float32]:
    """`count` copies of one unit vector: one text posted again and again (a template, a bot)."""
    return numpy.tile(numpy.eye(1, 256, dtype=numpy.float32), (count, 1))


def test_identical_texts_one_past_a_leaf_form_one_cluster_as_the_all_pairs_screen_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = _copies(LEAF_UNITS + 1)
    forest = cluster(matrix, THRESHOLD)
    monkeypatch.setattr(concern_screen, "LEAF_UNITS", len(matrix))  # one leaf: the all-pairs screen
    assert cluster(matrix, THRESHOLD) == [list(range(len(matrix)))]
    assert forest == [list(range(len(matrix)))]  # the forest gives [[0..63], [64..128]]


def test_more_identical_texts_than_max_part_units_form_no_concern() -> None:
    # docs/review-concerns.md: "a group of more than 600 near-identical texts that never comes apart forms no concern"
    assert cluster(_copies(5 * MAX_PART_UNITS), THRESHOLD) == []  # the forest gives 32 clusters of about 94



def test_a_merge_tied_to_the_integer_goes_to_the_group_the_store_holds_first() -> None:
    # docs/review-concerns.md: permuting the units permutes the clusters except where merges tie exactly. Two pairs
    # of copies (A, A and B, B, orthogonal) and one text exactly between them: its cosine to either pair is the
    # same integer, so it joins whichever pair comes first in the store's order.
    first, second = numpy.eye(2, 256, dtype=numpy.float32)
    between = (first + second) / numpy.linalg.norm(first + second)
    assert cluster(numpy.stack([first, first, second, second, between]), THRESHOLD) == [[0, 1, 4], [2, 3]]
    assert cluster(numpy.stack([second, second, first, first, between]), THRESHOLD) == [[0, 1, 4], [2, 3]]


def test_two_means_that_round_to_the_same_float_are_told_apart_exactly() -> None:
    # 71999800000001 / 359999 < 71880000000001 / 359400 by 4.6e-9, yet both divide to the same float64: the merge
    # must still take the higher mean, wherever the two pairs sit.
    higher, lower = (71_880_000_000_001, 359_400), (71_999_800_000_001, 359_999)
    for second, third in ((lower, higher), (higher, lower)):
        sums = numpy.zeros((3, 3), dtype=numpy.int64)
        sums[0, 1] = sums[1, 0] = second[0]
        sums[0, 2] = sums[2, 0] = third[0]
        sizes = numpy.array([1, second[1], third[1]], dtype=numpy.int64)
        assert second[0] / second[1] == third[0] / third[1]
        assert _Means(sums, sizes).best_pair(sums, sizes) == ((0, 2) if third == higher else (0, 1))
