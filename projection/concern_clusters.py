"""Average-linkage clustering of the review store's vectors, deterministic to the byte and independent of the
order the units come in.

Two units are neighbours when their cosine reaches the threshold. Average linkage merges, greedily, the two
clusters whose mean pairwise cosine is highest while it reaches the threshold, so every cluster's members are on
average that near each other: one neighbour in common never chains two concerns together (single linkage did, on
the labelled set; docs/review-concerns.md). A cluster whose mean reaches the threshold holds at least one pair of
neighbours between any two of its parts, so the clusters lie inside the connected parts of the neighbour graph:
the graph is found first (a float32 screen a little below the threshold), and the exact clustering runs on each
part on its own.

Determinism. Inside a part, cosines are recomputed in float64 and rounded to integer parts per billion, and a
cluster pair's similarity is the exact integer sum of its pairs over the product of the sizes: the same lake and
model give the same integers on any machine (BLAS's summation order moves a float64 cosine by ~1e-16, far below
the rounding), and the merge order is total — highest mean first, then the pair of smallest unit positions. Units
come sorted by ordinal, so the positions are the store's total order.

A part larger than MAX_PART_UNITS (a dense region: boilerplate, bots) is cut by raising the threshold for that part
alone, in THRESHOLD_STEP steps, over the edges already screened, until every piece fits: exact average linkage on
it would need its whole square matrix. Each unit joins the graph by at most MAX_NEIGHBOURS edges, which bounds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    # Imported where used: numpy's BLAS starts threads, and the build forks its readers only from a process with one.
    import numpy
    import numpy.typing

    Matrix = numpy.typing.NDArray[numpy.float32]
    Edges = tuple[numpy.typing.NDArray[numpy.int64], numpy.typing.NDArray[numpy.int64], Matrix]

PARTS_PER_BILLION: Final = 1_000_000_000
SCREEN_MARGIN: Final = 1e-3  # far above float32's error on a unit-vector dot product (~1e-6)
SCREEN_CELLS: Final = 16_000_000  # cosines the screen holds at once (64 MB of float32), whatever the lake's size
MAX_PART_UNITS: Final = 600
# Each unit joins the graph by at most this many of its nearest neighbours (every one tied with the last is kept,
# so the choice never depends on a sort's internals): it bounds the graph at 100,000 units without losing a
# cluster of up to that many members.
MAX_NEIGHBOURS: Final = 32
THRESHOLD_STEP: Final = 0.02


def neighbour_edges(matrix: Matrix, threshold: float) -> Edges:
    """(rows, columns, float32 cosines) joining each unit to its nearest neighbours (at most MAX_NEIGHBOURS, ties
    kept) whose cosine reaches `threshold` less SCREEN_MARGIN: a screen the exact pass decides on."""
    import numpy

    found_rows, found_columns, found_scores = [], [], []
    floor = threshold - SCREEN_MARGIN
    # About SCREEN_CELLS float32 cosines in hand at once, whatever the number of units.
    step = max(16, min(2_048, SCREEN_CELLS // max(1, len(matrix))))
    for start in range(0, len(matrix), step):
        block = matrix[start:start + step] @ matrix.T
        block[numpy.arange(len(block)), numpy.arange(start, start + len(block))] = -numpy.inf  # not its own
        near = block >= floor
        crowded = numpy.flatnonzero(near.sum(axis=1) > MAX_NEIGHBOURS)
        if len(crowded):
            # Only a row with more neighbours than it may keep pays for finding its MAX_NEIGHBOURS-th nearest.
            kth = numpy.partition(block[crowded], -MAX_NEIGHBOURS, axis=1)[:, -MAX_NEIGHBOURS:-MAX_NEIGHBOURS + 1]
            near[crowded] &= block[crowded] >= kth
        rows, columns = numpy.nonzero(near)
        found_rows.append(rows + start)
        found_columns.append(columns)
        found_scores.append(block[rows, columns])
    if not found_rows:
        empty = numpy.zeros(0, dtype=numpy.int64)
        return empty, empty, numpy.zeros(0, dtype=numpy.float32)
    return numpy.concatenate(found_rows), numpy.concatenate(found_columns), numpy.concatenate(found_scores)


def parts_of(count: int, edges: Edges, threshold: float) -> list[list[int]]:
    """The connected parts (two units or more) of the edges whose screened cosine reaches `threshold` less
    SCREEN_MARGIN, each as sorted positions, ordered by their first."""
    import numpy

    rows, columns, scores = edges
    kept = scores >= threshold - SCREEN_MARGIN
    rows, columns = rows[kept], columns[kept]
    labels = numpy.arange(count)
    while True:
        # Hook every edge's two labels to the smaller, then jump pointers until each label is its part's root: the
        # labels only fall, and end as each part's smallest position whatever the edges' order.
        low = numpy.minimum(labels[rows], labels[columns])
        hooked = labels.copy()
        numpy.minimum.at(hooked, labels[rows], low)
        numpy.minimum.at(hooked, labels[columns], low)
        while not numpy.array_equal(jumped := hooked[hooked], hooked):
            hooked = jumped
        if numpy.array_equal(hooked, labels):
            break
        labels = hooked
    parts: dict[int, list[int]] = {}
    for unit, label in enumerate(labels.tolist()):
        parts.setdefault(label, []).append(unit)
    return [members for members in parts.values() if len(members) > 1]


def cluster(matrix: Matrix, threshold: float) -> list[list[int]]:
    """Average-linkage clusters of two units or more, as sorted unit positions, ordered by their first unit."""
    edges = neighbour_edges(matrix, threshold)
    found: list[list[int]] = []
    for part in parts_of(len(matrix), edges, threshold):
        found += _cluster_part(matrix, part, edges, threshold)
    return sorted(found)


def _cluster_part(matrix: Matrix, part: list[int], edges: Edges, threshold: float) -> list[list[int]]:
    if len(part) <= MAX_PART_UNITS:
        return _average_linkage(matrix, part, threshold)
    tighter = threshold + THRESHOLD_STEP
    if tighter >= 1.0:
        return []
    import numpy

    rows, columns, scores = edges
    inside = numpy.zeros(len(matrix), dtype=bool)
    inside[part] = True
    kept = inside[rows] & inside[columns]
    local = numpy.full(len(matrix), -1, dtype=numpy.int64)
    local[part] = numpy.arange(len(part))
    narrowed = (local[rows[kept]], local[columns[kept]], scores[kept])
    pieces: list[list[int]] = []
    for piece in parts_of(len(part), narrowed, tighter):
        pieces += _cluster_part(matrix, [part[at] for at in piece], edges, tighter)
    return pieces


def _average_linkage(matrix: Matrix, part: list[int], threshold: float) -> list[list[int]]:
    """Greedy average linkage over `part` (sorted unit positions), stopped below `threshold`."""
    import numpy

    vectors = matrix[part].astype(numpy.float64)
    sums = numpy.rint(vectors @ vectors.T * PARTS_PER_BILLION).astype(numpy.int64)
    floor = round(threshold * PARTS_PER_BILLION)
    sizes = numpy.ones(len(part), dtype=numpy.int64)
    alive = numpy.ones(len(part), dtype=bool)
    members = [[unit] for unit in part]
    while True:
        pair = _best_pair(sums, sizes, alive)
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
    return [members[at] for at in numpy.flatnonzero(alive).tolist() if len(members[at]) > 1]


def _best_pair(sums: numpy.typing.NDArray[numpy.int64], sizes: numpy.typing.NDArray[numpy.int64],
               alive: numpy.typing.NDArray[numpy.bool_]) -> tuple[int, int] | None:
    """The live pair with the highest mean similarity; among equals, the pair of smallest positions."""
    import numpy

    live = numpy.flatnonzero(alive)
    if len(live) < 2:
        return None
    block = sums[numpy.ix_(live, live)] / numpy.outer(sizes[live], sizes[live])
    numpy.fill_diagonal(block, -numpy.inf)
    # argmax over the flattened block takes the first maximum in row-major order: the smallest row, then column.
    flat = int(numpy.argmax(block))
    row, column = divmod(flat, len(live))
    return int(live[row]), int(live[column])
