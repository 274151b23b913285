"""Average-linkage clustering of the review store's vectors, deterministic to the byte: permuting the units permutes
the clusters, except where two merges tie exactly, which the store's order decides.

Two units are neighbours when their cosine reaches the threshold. Average linkage merges, greedily, the two
clusters whose mean pairwise cosine is highest while it reaches the threshold, so every cluster's members are on
average that near each other: one neighbour in common never chains two concerns together (single linkage did, on
the labelled set; docs/review-concerns.md). A cluster whose mean reaches the threshold holds at least one pair of
neighbours between any two of its parts, so the clusters lie inside the connected parts of the neighbour graph:
the graph is found first (`concern_screen`, a forest of random-projection trees, each unit keeping at most
MAX_NEIGHBOURS edges, SCREEN_MARGIN under the threshold), and the exact clustering runs on each part on its own.

Determinism. Every cosine decided on, in the screen and here, is an exact integer: the dot product of two vectors
quantised to integers (`concern_screen.quantised`), scaled to parts per billion by one correctly rounded
multiplication; a cluster pair's similarity is the exact integer sum of its pairs against the threshold times the
product of the sizes, and the merge order is total — highest mean first, then the pair of smallest unit positions.
Units come sorted by ordinal, so the positions are the store's total order, and nothing depends on the order files
were read, on BLAS's summation order or on the instruction set.

A part larger than MAX_PART_UNITS (a dense region: boilerplate, bots) is cut by raising the threshold for that part
alone, in THRESHOLD_STEP steps, over the edges already screened, until every piece fits: exact average linkage on
it would need its whole square matrix.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction
from typing import TYPE_CHECKING, Final

from projection.concern_screen import PARTS_PER_BILLION, neighbour_edges, ppb_scale, quantised

if TYPE_CHECKING:
    # Imported where used: numpy's BLAS starts threads, and the build forks its readers only from a process with one.
    import numpy
    import numpy.typing

    from projection.concern_screen import Edges, Exact, Matrix

    Labels = numpy.typing.NDArray[numpy.int64]
    Positions = numpy.typing.NDArray[numpy.int64]

SCREEN_MARGIN: Final = 1e-3  # the neighbour graph's floor sits this far under the threshold
MAX_PART_UNITS: Final = 600
THRESHOLD_STEP: Final = 0.02


def floor_of(threshold: float) -> int:
    """The neighbour graph's floor for `threshold`, in parts per billion."""
    return round((threshold - SCREEN_MARGIN) * PARTS_PER_BILLION)


def part_labels(count: int, edges: Edges, threshold: float) -> Labels:
    """Each unit's part in the graph of the edges whose cosine reaches `threshold` less SCREEN_MARGIN: the smallest
    position in its part, whatever the edges' order."""
    import numpy

    rows, columns, scores = edges
    kept = scores >= floor_of(threshold)
    rows, columns = rows[kept], columns[kept]
    labels = numpy.arange(count)
    while True:
        # Hook every edge's two labels to the smaller, then jump pointers until each label is its part's root: the
        # labels only fall, and end as each part's smallest position.
        low = numpy.minimum(labels[rows], labels[columns])
        hooked = labels.copy()
        numpy.minimum.at(hooked, labels[rows], low)
        numpy.minimum.at(hooked, labels[columns], low)
        while not numpy.array_equal(jumped := hooked[hooked], hooked):
            hooked = jumped
        if numpy.array_equal(hooked, labels):
            return labels
        labels = hooked


def cluster(matrix: Matrix, threshold: float) -> list[list[int]]:
    """Average-linkage clusters of two units or more, as sorted unit positions, ordered by their first unit."""
    from threadpoolctl import threadpool_limits

    # Thousands of small products: BLAS threads cost more than they give (the screen at 100,000 units took 25 s
    # with OpenBLAS's two threads on a shared machine, 4.5 s with one; docs/review-concerns.md).
    with threadpool_limits(limits=1, user_api="blas"):
        return _clusters(matrix, threshold)


def _clusters(matrix: Matrix, threshold: float) -> list[list[int]]:
    import numpy

    exact = quantised(matrix)
    found: list[list[int]] = []
    level, units, edges = threshold, numpy.arange(len(matrix)), neighbour_edges(exact, floor_of(threshold))
    while True:
        # Parts too dense for exact linkage are cut over their own edges at a higher threshold, all of a level's
        # together (they share no unit): one pass per level, however many parts.
        dense: list[tuple[Positions, Edges]] = []
        for part, inside in _parts(len(units), edges, level):
            members = units[part]
            if len(members) <= MAX_PART_UNITS:
                found += _average_linkage(exact, members.tolist(), level)
            elif level + THRESHOLD_STEP < 1.0:
                dense.append((members, inside))
        if not dense:
            return sorted(found)
        units, edges = numpy.concatenate([m for m, _ in dense]), _joined(dense)
        if level == threshold:
            # A part's pieces at any higher threshold are those of its maximum spanning forest's edges over it:
            # the cuts read n edges, not MAX_NEIGHBOURS x n.
            edges = _spanning_forest(len(units), edges)
        level += THRESHOLD_STEP
        weakest = int(edges[2].min()) if len(edges[2]) else floor_of(1.0)
        while floor_of(level) <= weakest and level + THRESHOLD_STEP < 1.0:
            level += THRESHOLD_STEP  # a level that drops no edge leaves every part as it is: skip it


def _spanning_forest(count: int, edges: Edges) -> Edges:
    """A maximum spanning forest of the edges (Boruvka: each part takes its strongest edge out, ties by the edge's
    place in a total order of cosine, then positions), so the same edges whatever their order."""
    import numpy

    rows, columns, scores = edges
    ordered = _strongest_first(count, edges)
    rank = numpy.empty(len(rows), dtype=numpy.int64)
    rank[ordered] = numpy.arange(len(rows))
    chosen = numpy.zeros(len(rows), dtype=bool)
    labels = numpy.arange(count)
    while True:
        left, right = labels[rows], labels[columns]
        across = numpy.flatnonzero(left != right)
        if not len(across):
            return rows[chosen], columns[chosen], scores[chosen]
        strongest = numpy.full(count, len(rows), dtype=numpy.int64)
        numpy.minimum.at(strongest, left[across], rank[across])
        numpy.minimum.at(strongest, right[across], rank[across])
        chosen[ordered[strongest[strongest < len(rows)]]] = True  # each part's strongest edge out
        labels = part_labels(count, (rows[chosen], columns[chosen], scores[chosen]), -1.0)


def _strongest_first(count: int, edges: Edges) -> Positions:
    """The edges' places ordered by cosine (highest first), then smaller position, then larger, then place: one
    stable sort of a packed integer key where it fits in 63 bits, two otherwise."""
    import numpy

    rows, columns, scores = edges
    if not len(rows):
        return numpy.zeros(0, dtype=numpy.int64)
    pair = numpy.minimum(rows, columns) * count + numpy.maximum(rows, columns)  # orders as (smaller, larger)
    strongest = int(scores.max())
    if (strongest - int(scores.min()) + 1) * count * count < 1 << 63:
        return numpy.argsort((strongest - scores) * (count * count) + pair, kind="stable")
    return numpy.lexsort((pair, -scores))


def _joined(dense: list[tuple[Positions, Edges]]) -> Edges:
    """The parts' edges renumbered as positions in their members laid end to end."""
    import numpy

    offsets = numpy.cumsum([0] + [len(members) for members, _ in dense[:-1]])
    return (numpy.concatenate([e[0] + at for (_, e), at in zip(dense, offsets, strict=True)]),
            numpy.concatenate([e[1] + at for (_, e), at in zip(dense, offsets, strict=True)]),
            numpy.concatenate([e[2] for _, e in dense]))


def _parts(count: int, edges: Edges, threshold: float) -> Iterator[tuple[Positions, Edges]]:
    """Each connected part of two units or more (sorted local positions) with its edges, renumbered inside it."""
    import numpy

    labels = part_labels(count, edges, threshold)
    order = numpy.argsort(labels, kind="stable")  # by part, then position
    roots, starts, sizes = numpy.unique(labels[order], return_index=True, return_counts=True)
    rank = numpy.empty(count, dtype=numpy.int64)
    rank[order] = numpy.arange(count) - numpy.repeat(starts, sizes)
    rows, columns, scores = edges
    kept = (labels[rows] == labels[columns]) & (scores >= floor_of(threshold))
    rows, columns, scores = rows[kept], columns[kept], scores[kept]
    by_part = numpy.argsort(labels[rows], kind="stable")
    rows, columns, scores = rows[by_part], columns[by_part], scores[by_part]
    edge_starts = numpy.searchsorted(labels[rows], roots)
    edge_ends = numpy.searchsorted(labels[rows], roots, side="right")
    for at in numpy.flatnonzero(sizes > 1).tolist():
        part = order[starts[at]:starts[at] + sizes[at]]
        span = slice(edge_starts[at], edge_ends[at])
        yield part, (rank[rows[span]], rank[columns[span]], scores[span])


def _average_linkage(exact: Exact, part: list[int], threshold: float) -> list[list[int]]:
    """Greedy average linkage over `part` (sorted unit positions), stopped below `threshold`."""
    import numpy

    vectors = exact[part]
    sums = numpy.rint(vectors @ vectors.T * ppb_scale(exact.shape[1])).astype(numpy.int64)
    floor = round(threshold * PARTS_PER_BILLION)
    sizes = numpy.ones(len(part), dtype=numpy.int64)
    alive = numpy.ones(len(part), dtype=bool)
    members = [[unit] for unit in part]
    means = _Means(sums, sizes)
    while True:
        pair = means.best_pair(sums, sizes)
        if pair is None:
            break
        first, second = pair
        if sums[first, second] < floor * sizes[first] * sizes[second]:
            break
        sums[first] += sums[second]
        sums[:, first] += sums[:, second]
        sizes[first] += sizes[second]
        alive[second] = False
        members[first] = sorted(members[first] + members[second])
        means.merged(sums, sizes, alive, first, second)
    return [members[at] for at in numpy.flatnonzero(alive).tolist() if len(members[at]) > 1]


class _Means:
    """Every live pair's mean similarity as a float, above the diagonal (the rest -inf), with each row's maximum and
    a column holding it: a merge changes two rows and two columns, so finding the next pair costs one pass over the
    rows, not a scan of every pair. Division rounds correctly, so it never reverses two exact means, but it can
    make two different ones equal: the pairs at the float maximum are compared as exact fractions, and among exact
    equals the first in row-major order above the diagonal wins (the smallest row, then column; a pair below it has
    its mirror in an earlier row)."""

    def __init__(self, sums: numpy.typing.NDArray[numpy.int64], sizes: numpy.typing.NDArray[numpy.int64]) -> None:
        import numpy

        # int64 sums over int64 size products, correctly rounded, as `merged` divides (sizes of 1: each sum itself).
        self.values = sums / numpy.outer(sizes, sizes)
        numpy.copyto(self.values, -numpy.inf, where=numpy.tri(len(sums), dtype=bool))
        self.top = self.values.max(axis=1) if len(sums) else numpy.zeros(0)
        self.at = self.values.argmax(axis=1) if len(sums) else numpy.zeros(0, dtype=numpy.int64)

    def best_pair(self, sums: numpy.typing.NDArray[numpy.int64],
                  sizes: numpy.typing.NDArray[numpy.int64]) -> tuple[int, int] | None:
        """The live pair of highest mean; among equals, the pair of smallest positions."""
        import numpy

        if not len(self.top):
            return None
        highest = self.top.max()
        if highest == -numpy.inf:
            return None
        rows = numpy.flatnonzero(self.top == highest)
        if len(rows) == 1:
            columns = numpy.flatnonzero(self.values[rows[0]] == highest)
            if len(columns) == 1:
                return int(rows[0]), int(columns[0])
        # Floats tied at the maximum: every pair holding it, compared exactly, the first in row-major order wins.
        tied = numpy.flatnonzero(self.values == highest)
        everyone = numpy.arange(len(sizes))
        row, column = divmod(int(tied[0]) if len(tied) == 1 else _exactly_first(sums, sizes, everyone, tied),
                             len(sizes))
        return row, column

    def merged(self, sums: numpy.typing.NDArray[numpy.int64], sizes: numpy.typing.NDArray[numpy.int64],
               alive: numpy.typing.NDArray[numpy.bool_], first: int, second: int) -> None:
        """Bring the means up to date after `second` merged into `first` (first < second)."""
        import numpy

        values, top, at = self.values, self.top, self.at
        values[second, :] = -numpy.inf
        values[:, second] = -numpy.inf
        top[second] = -numpy.inf
        # The same division as at the start: int64 sums over int64 size products, correctly rounded.
        after = slice(first + 1, None)
        values[first, after] = numpy.where(alive[after], sums[first, after] / (sizes[first] * sizes[after]),
                                           -numpy.inf)
        values[:first, first] = numpy.where(alive[:first], sums[:first, first] / (sizes[:first] * sizes[first]),
                                            -numpy.inf)
        # A row whose maximum stood at either column is looked at again; one below `first` may rise to it.
        stale = numpy.flatnonzero(alive & ((at == first) | (at == second)))
        column = values[:first, first]
        rising = numpy.flatnonzero(column > top[:first])
        top[rising], at[rising] = column[rising], first
        redo = numpy.append(stale, first)  # `first` may be in `stale` too: both assign the same
        top[redo], at[redo] = values[redo].max(axis=1), values[redo].argmax(axis=1)


def _exactly_first(sums: numpy.typing.NDArray[numpy.int64], sizes: numpy.typing.NDArray[numpy.int64],
                   live: numpy.typing.NDArray[numpy.int64], tied: numpy.typing.NDArray[numpy.int64]) -> int:
    """Of the flat positions `tied` (row-major, ascending), the first whose exact mean is the highest."""
    import numpy

    rows, columns = live[tied // len(live)], live[tied % len(live)]
    # Each mean in lowest terms (the product of sizes is positive): equal means are then equal pairs, and the many
    # tied pairs of repeated texts are mostly one pair, so only distinct ones become fractions.
    totals, products = sums[rows, columns], sizes[rows] * sizes[columns]
    common = numpy.gcd(totals, products)
    totals, products = totals // common, products // common
    if (totals == totals[0]).all() and (products == products[0]).all():
        return int(tied[0])
    best = max(Fraction(total, product) for total, product in set(zip(totals.tolist(), products.tolist(),
                                                                       strict=True)))
    highest = (totals == best.numerator) & (products == best.denominator)
    return int(tied[numpy.flatnonzero(highest)[0]])
