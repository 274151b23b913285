"""The int8-read dense scan answers exactly what a float32 scan answers, ties in row order."""

from __future__ import annotations

import numpy
import pytest

from projection.review_scan import QuantisedMatrix, exact_scores


def _unit_rows(rows: int, dimension: int, seed: int) -> numpy.typing.NDArray[numpy.float32]:
    matrix = numpy.random.default_rng(seed).standard_normal((rows, dimension)).astype(numpy.float32)
    matrix /= numpy.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def _exact(matrix: numpy.typing.NDArray[numpy.float32], query: numpy.typing.NDArray[numpy.float32],
           allowed: numpy.typing.NDArray[numpy.bool_] | None, count: int) -> list[int]:
    scores = exact_scores(matrix, query)
    positions = numpy.arange(len(matrix)) if allowed is None else numpy.flatnonzero(allowed)
    order = numpy.lexsort((positions, -scores[positions]))
    return [int(p) for p in positions[order][:count]]


def _clustered(rows: int, dimension: int, seed: int) -> numpy.typing.NDArray[numpy.float32]:
    """Rows crowded around a few directions, with exact duplicates: near-ties and ties, the hard case for a bound."""
    rng = numpy.random.default_rng(seed)
    centres = _unit_rows(4, dimension, seed + 1)
    matrix = centres[rng.integers(0, 4, rows)] + 0.05 * rng.standard_normal((rows, dimension)).astype(numpy.float32)
    matrix[rows // 2:rows // 2 + 40] = matrix[7]  # forty rows equal to row 7: their cosines tie exactly
    matrix /= numpy.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix.astype(numpy.float32)


@pytest.mark.parametrize("make", [_unit_rows, _clustered])
def test_the_quantised_scan_returns_the_exact_scans_rows_and_cosines_ties_in_row_order(make: object) -> None:
    matrix = make(3_000, 64, 5)  # type: ignore[operator]
    scan = QuantisedMatrix(matrix)
    for query in (matrix[7], matrix[100], _unit_rows(1, 64, 99)[0]):
        for count in (1, 5, 30, 60):
            picked, scores, _ = scan.nearest(query, None, count)
            expected = _exact(matrix, query, None, count)
            assert picked.tolist() == expected
            assert numpy.array_equal(scores, exact_scores(matrix, query)[expected])


def test_a_query_equal_to_forty_rows_ranks_them_first_in_row_order() -> None:
    matrix = _clustered(3_000, 64, 5)
    picked, _, _ = QuantisedMatrix(matrix).nearest(matrix[7], None, 41)
    assert picked.tolist() == [7, *range(1_500, 1_540)]


def test_only_allowed_rows_are_answered_and_exactly_ranked() -> None:
    matrix = _clustered(3_000, 64, 6)
    allowed = numpy.zeros(3_000, dtype=bool)
    allowed[::3] = True
    picked, _, _ = QuantisedMatrix(matrix).nearest(matrix[8], allowed, 30)
    assert picked.tolist() == _exact(matrix, matrix[8], allowed, 30)
    assert all(allowed[picked])


def test_asking_for_exactly_the_allowed_rows_or_one_more_returns_each_once_in_exact_order() -> None:
    matrix = _unit_rows(50, 16, 7)
    allowed = numpy.zeros(50, dtype=bool)
    allowed[10:20] = True
    scan = QuantisedMatrix(matrix)
    for count in (10, 11):
        picked, _, _ = scan.nearest(matrix[12], allowed, count)
        assert picked.tolist() == _exact(matrix, matrix[12], allowed, 10)
    assert scan.nearest(matrix[12], allowed, 9)[0].tolist() == _exact(matrix, matrix[12], allowed, 9)


def test_no_allowed_row_gives_an_empty_answer() -> None:
    matrix = _unit_rows(20, 8, 8)
    picked, scores, _ = QuantisedMatrix(matrix).nearest(matrix[0], numpy.zeros(20, dtype=bool), 5)
    assert picked.tolist() == [] and scores.tolist() == []


def test_a_matrix_without_rows_answers_empty() -> None:
    scan = QuantisedMatrix(numpy.zeros((0, 8), dtype=numpy.float32))
    for allowed in (None, numpy.zeros(0, dtype=bool)):
        picked, scores, rescored = scan.nearest(_unit_rows(1, 8, 1)[0], allowed, 5)
        assert (picked.tolist(), scores.tolist(), rescored) == ([], [], 0)


def test_a_zero_query_and_zero_rows_score_zero_and_keep_row_order() -> None:
    matrix = _unit_rows(20, 8, 9)
    matrix[3] = 0
    scan = QuantisedMatrix(matrix)
    picked, scores, _ = scan.nearest(numpy.zeros(8, dtype=numpy.float32), None, 4)
    assert picked.tolist() == [0, 1, 2, 3] and scores.tolist() == [0.0] * 4
    assert 3 in scan.nearest(-matrix[0], None, 20)[0].tolist()


def test_no_rows_exact_cosine_is_farther_from_its_int8_score_than_the_bound() -> None:
    matrix = _clustered(2_000, 256, 10)
    scan = QuantisedMatrix(matrix)
    for query in (matrix[1], _unit_rows(1, 256, 11)[0]):
        approximate, error = scan.approximate(query)
        assert 0 < error < 0.05
        assert float(numpy.abs(exact_scores(matrix, query) - approximate).max()) <= error


def test_the_scan_rescores_a_small_share_of_the_rows() -> None:
    # What makes it fast: the bound is tight enough that few rows need their float32 cosine.
    matrix = _unit_rows(20_000, 256, 12)
    matrix[5] = 0  # a text with no token embeds as a zero row: it must not widen every row's bound
    picked, _, rescored = QuantisedMatrix(matrix).nearest(matrix[3], None, 30)
    assert rescored < 2_000
    assert picked.tolist() == _exact(matrix, matrix[3], None, 30)
