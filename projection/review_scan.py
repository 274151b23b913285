"""The dense scan behind `review.findSimilar`: the exact nearest rows of one matrix, read through an int8 copy.

A float32 scan reads four bytes a dimension: a gigabyte a call at a million 256-dimension units, which alone cost
more than the latency target on this machine (docs/review-similar.md). The int8 copy is a quarter of that, and
numkong's integer kernels read it at memory speed (single-threaded: no thread pool to contend with on a loaded
machine). Quantising makes each row's score approximate, but by at most a bound computed per row, so:

1. every row gets an integer score and an interval [lower, upper] that holds its exact cosine;
2. the k-th best lower bound is a threshold no row outside the exact top k can reach with its upper bound;
3. the rows whose upper bound reaches it are rescored in float32, and ranked exactly.

The answer is therefore the exact scan's — the same rows, the same float32 cosines, ties in position order — never
an approximation; only the work is smaller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    # numpy is imported where it is used: the review build imports this package and forks only while it has one
    # thread (`theurian.forked.fork_is_safe`).
    import numpy
    import numpy.typing

    Vector = numpy.typing.NDArray[numpy.float32]

CODE_MAX: Final = 127  # int8 codes lie in -127..127, so a code times a code fits int32 sums at any dimension here
# Headroom for float32 rounding in the scores and the bounds themselves (each well under 1e-5 at 256 dimensions).
ROUNDING_SLACK: Final = 1e-4
_CHUNK: Final = 65_536  # rows quantised at once: bounds the float32 temporary, not the result


class QuantisedMatrix:
    """An int8 copy of a float32 matrix (one scale per row) with what bounds each row's quantisation error."""

    def __init__(self, matrix: Vector) -> None:
        import numpy

        rows, self.dimension = matrix.shape
        self.matrix = matrix
        self.codes = numpy.zeros((rows, self.dimension), dtype=numpy.int8)
        self.inverse = numpy.zeros(rows, dtype=numpy.float32)  # 1 / the row's scale: code × inverse ≈ value
        self.code_l1 = numpy.zeros(rows, dtype=numpy.float32)  # the sum of a row's |codes|
        for start in range(0, rows, _CHUNK):
            block = matrix[start:start + _CHUNK]
            peak = numpy.abs(block).max(axis=1) if block.size else numpy.zeros(len(block), dtype=numpy.float32)
            scale = numpy.where(peak > 0, CODE_MAX / numpy.where(peak > 0, peak, 1), 1).astype(numpy.float32)
            codes = numpy.rint(block * scale[:, None]).astype(numpy.int8)
            self.codes[start:start + len(block)] = codes
            # A zero row's codes are exactly its values: an inverse of 0 keeps it out of the error bound.
            self.inverse[start:start + len(block)] = numpy.where(peak > 0, 1 / scale, 0)
            self.code_l1[start:start + len(block)] = numpy.abs(codes.astype(numpy.int32)).sum(axis=1)
        # The largest |c|₁/2s and 1/s of any row: what the error bound of `approximate` needs of the rows.
        self._half_l1_peak = float((self.code_l1 * self.inverse).max()) / 2 if rows else 0.0
        self._inverse_peak = float(self.inverse.max()) if rows else 0.0

    def __len__(self) -> int:
        return len(self.inverse)

    def nearest(self, query: Vector, allowed: numpy.typing.NDArray[numpy.bool_] | None,
                count: int) -> tuple[numpy.typing.NDArray[numpy.intp], Vector, int]:
        """The `count` rows (of those `allowed`; all when None) with the highest exact cosine to `query`, highest
        first, equal cosines in row order: (their positions, their float32 cosines, how many rows were rescored).
        """
        import numpy

        approximate, error = self.approximate(query)
        positions = None
        if allowed is not None:
            # Compacted rather than masked with -inf: partitioning a vector mostly of equal values is slow.
            positions = numpy.flatnonzero(allowed)
            approximate = approximate[positions]
        if len(approximate) > count:
            # `count` rows score at least kth - error exactly; a row below kth - 2 × error cannot beat them.
            kth = numpy.partition(approximate, len(approximate) - count)[len(approximate) - count]
            candidates = numpy.flatnonzero(approximate >= kth - 2 * error)
        else:
            candidates = numpy.arange(len(approximate))
        if positions is not None:
            candidates = positions[candidates]
        exact = exact_scores(self.matrix[candidates], query)
        order = numpy.lexsort((candidates, -exact))[:count]
        return candidates[order], exact[order], len(candidates)

    def approximate(self, query: Vector) -> tuple[Vector, float]:
        """Every row's cosine with `query` from the int8 codes, and a bound no row's exact cosine is farther off.

        With a row m = c/s + e (|e_j| ≤ 1/2s) and the query q = g/t + f (|f_j| ≤ 1/2t), m·q differs from c·g/st
        by at most (|c|₁/2 + |g|₁/2 + d/4) / st; the bound is that maximum over the rows (one number, so the scan
        makes no per-row temporary: at a million rows each costs milliseconds)."""
        import numkong
        import numpy

        peak = float(numpy.abs(query).max())
        if peak == 0 or not len(self):  # numkong refuses an empty matrix; an empty store has no row to score
            return numpy.zeros(len(self), dtype=numpy.float32), ROUNDING_SLACK
        scale = CODE_MAX / peak
        code = numpy.rint(query * scale).astype(numpy.int8)
        dots = numpy.array(
            numkong.cdist(self.codes, code[None, :], metric="dot", out_dtype="float32", threads=1), copy=False
        ).reshape(len(self))
        dots *= self.inverse  # in place, twice: a temporary of a million floats costs more than the multiply
        dots *= numpy.float32(1 / scale)
        query_l1 = float(numpy.abs(code.astype(numpy.int32)).sum())
        error = (self._half_l1_peak + (query_l1 / 2 + self.dimension / 4) * self._inverse_peak) / scale
        return dots, error + ROUNDING_SLACK


def exact_scores(rows: Vector, query: Vector) -> Vector:
    """The float32 dot product of each row with `query`, each computed the same way whatever the rows' count
    (einsum's own loop: no BLAS thread pool, whose split of the work would change with the machine)."""
    import numpy

    scores: Vector = numpy.einsum("ij,j->i", rows, query)
    return scores
