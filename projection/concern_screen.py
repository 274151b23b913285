"""The concern clustering's neighbour screen: for each unit, its nearest neighbours (at most MAX_NEIGHBOURS) whose
cosine reaches a floor, found by a forest of random-projection trees instead of comparing every unit with every
other, so its cost grows as n log n, not n².

Arithmetic (what the answer depends on, and nothing else). The vectors are quantised to integers,
round(component × 2^QUANTUM_BITS), by one correctly rounded multiplication each. Every cosine the screen or the
clustering decides on is the dot product of two such integer vectors, computed in float64 by BLAS: every partial
sum is an integer below 2^53, so it is exact whatever the summation order, the instruction set or the library, and
then scaled to integer parts per billion by one correctly rounded multiplication. A tree's split direction is
int8 bytes of blake2b over (tree, depth), so its projections are exact integers too. The same vectors therefore give
the same integers, the same trees and the same edges on every machine; no float rounding decides anything.

The forest. Each of SCREEN_TREES trees halves the units, level by level, at the median of their projection on that
level's direction (ties: a hash of the unit's position, its own for each tree and level — with the order of the
level before instead, identical texts would tie on every direction and every tree would cut them into the same
blocks of positions, splitting one repeated text into several clusters), until every leaf holds at most
LEAF_UNITS units (one more, when a leaf of an odd count halves); two units are compared when they share a leaf in some
tree. A store of at most LEAF_UNITS units is one leaf: the screen is then the exact all-pairs screen. A unit keeps its
MAX_NEIGHBOURS nearest found (highest cosine, then smallest position), so a crowded region (boilerplate, a bot) is
bounded by MAX_NEIGHBOURS edges a unit, as the clustering needs. docs/review-concerns.md measures how many of the
all-pairs screen's edges and clusters the forest keeps.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    # Imported where used: numpy's BLAS starts threads, and the build forks its readers only from a process with one.
    import numpy
    import numpy.typing

    Matrix = numpy.typing.NDArray[numpy.float32]
    Exact = numpy.typing.NDArray[numpy.float64]
    Keys = numpy.typing.NDArray[numpy.int64]
    Edges = tuple[numpy.typing.NDArray[numpy.int64], numpy.typing.NDArray[numpy.int64], Keys]

PARTS_PER_BILLION: Final = 1_000_000_000
MAX_NEIGHBOURS: Final = 32
SCREEN_TREES: Final = 8
LEAF_UNITS: Final = 128
LEAF_CELLS: Final = 4_000_000  # float64 cells (cosines or vector components) a chunk of leaves holds at once
_DIRECTION_DOMAIN: Final = "theurian-concern-screen/1"
_TIE_DOMAIN: Final = "theurian-concern-screen-ties/1"
# A key packs (cosine in parts per billion, position) into one int64 that orders by cosine, then smaller position.
_POSITION_BITS: Final = 32
_POSITION_MASK: Final = (1 << _POSITION_BITS) - 1
_COSINE_OFFSET: Final = 1 << 30  # a cosine in parts per billion lies in [-2^30, 2^30)
_NONE: Final = -1  # an empty slot: below every key
_PACKED_KEYS: Final = 1 << 63  # a leaf and a projection pack into one int64 key below this


def quantum_bits(dimension: int) -> int:
    """Bits after the point of a quantised component: a dot product of two quantised unit vectors stays below 2^52."""
    return (52 - max(1, dimension).bit_length()) // 2


def quantised(matrix: Matrix) -> Exact:
    """The unit vectors as integers (held in float64), round(component × 2^quantum_bits)."""
    import numpy

    exact = matrix.astype(numpy.float64)
    exact *= float(1 << quantum_bits(matrix.shape[1]))  # in place: one array of n x dimension float64, not three
    return numpy.rint(exact, out=exact)


def ppb_scale(dimension: int) -> float:
    """What turns an exact dot product of two quantised vectors into parts per billion."""
    return PARTS_PER_BILLION / float(1 << (2 * quantum_bits(dimension)))


def neighbour_edges(exact: Exact, floor: int) -> Edges:
    """(rows, columns, cosines in parts per billion): each unit joined to its nearest found neighbours, at most
    MAX_NEIGHBOURS, whose cosine reaches `floor` (parts per billion); `exact` is `quantised(...)`."""
    import numpy

    count = len(exact)
    best = numpy.full((count, MAX_NEIGHBOURS), _NONE, dtype=numpy.int64)
    trees = 0 if count < 2 else 1 if count <= LEAF_UNITS else SCREEN_TREES
    def tree_keys(tree: int) -> Keys:
        order, starts = _leaves(exact, tree)
        return _leaf_neighbours(exact, order, starts, floor)

    # The trees are independent and numpy releases the GIL in their products, so they run on the CPUs this process
    # may use (1.8 x on two: 3.08 s to 1.71 s at 66,667 units). Merging keeps the highest distinct keys of all
    # trees, which no order of arrival changes; the pool's threads are joined before the build forks again.
    with ThreadPoolExecutor(max_workers=max(1, min(trees, len(os.sched_getaffinity(0))))) as pool:
        for keys in pool.map(tree_keys, range(trees)):
            best = _merged(best, keys)
    rows, slots = numpy.nonzero(best != _NONE)
    keys = best[rows, slots]
    return rows.astype(numpy.int64), _POSITION_MASK - (keys & _POSITION_MASK), (keys >> _POSITION_BITS) - _COSINE_OFFSET


def _direction_matrix(tree: int, depth: int, dimension: int) -> Exact:
    import numpy

    columns = []
    for level in range(depth):
        raw = b""
        while len(raw) < dimension:
            key = f"{_DIRECTION_DOMAIN}\n{tree}\n{level}\n{len(raw)}".encode()
            raw += hashlib.blake2b(key, digest_size=64).digest()
        columns.append(numpy.frombuffer(raw[:dimension], dtype=numpy.int8))
    return numpy.stack(columns, axis=1).astype(numpy.float64) if columns else numpy.zeros((dimension, 0))


def _leaves(exact: Exact, tree: int) -> tuple[numpy.typing.NDArray[numpy.int64], numpy.typing.NDArray[numpy.int64]]:
    """The units grouped by leaf (in no particular order within one: only a leaf's members matter downstream) and
    where each leaf starts (the last entry is the count)."""
    import numpy

    count = len(exact)
    depth = 0
    while (count >> depth) > LEAF_UNITS:
        depth += 1
    # |projection| <= dimension x 2^quantum_bits x 128 < 2^53: exact integers, whatever BLAS does.
    projections = exact @ _direction_matrix(tree, depth, exact.shape[1])
    leaf = numpy.zeros(count, dtype=numpy.int64)
    for level in range(depth):
        # Leaf i's lower half by (projection, tie) becomes leaf 2i, its upper half 2i + 1: a leaf of an odd count
        # keeps the extra unit in its upper half.
        leaf = 2 * leaf + _upper_halves(leaf, 1 << level, projections[:, level], tree, level)
    order = numpy.argsort(leaf, kind="stable")
    starts = numpy.zeros((1 << depth) + 1, dtype=numpy.int64)
    numpy.cumsum(numpy.bincount(leaf, minlength=1 << depth), out=starts[1:])
    return order, starts


def _upper_halves(leaf: numpy.typing.NDArray[numpy.int64], leaves: int, projection: Exact, tree: int,
                  level: int) -> numpy.typing.NDArray[numpy.int64]:
    """1 for each unit in the upper half of its leaf (the last ceil(size / 2) by projection, equal projections by
    a hash of position, `_tie_breaks`), else 0.

    One sort of a packed integer key (leaf, projection) decides every unit but those whose projection equals the
    one across the median of their leaf: only those few are ordered by their tie hash."""
    import numpy

    count = len(leaf)
    values = projection.astype(numpy.int64)  # exact integers below 2^53
    low = int(values.min())
    span = int(values.max()) - low + 1
    sizes = numpy.bincount(leaf, minlength=leaves)
    starts = numpy.concatenate([[0], numpy.cumsum(sizes)[:-1]])
    middles = starts + sizes // 2  # where each leaf's upper half starts, in the sorted order
    if leaves * span >= _PACKED_KEYS:
        # The key would overflow (a dimension or a count far past any model's or store's): the projections' ranks
        # order the same and pack.
        values = numpy.unique(values, return_inverse=True)[1].astype(numpy.int64)
        low, span = 0, int(values.max()) + 1
    key = leaf * span + (values - low)
    order = numpy.argsort(key)
    ranked = key[order]
    upper = (numpy.arange(count) >= middles[leaf[order]]).astype(numpy.int64)
    # A leaf whose median falls inside a run of equal keys: that run is ordered by the tie hash.
    split = numpy.flatnonzero((sizes >= 2) & (ranked[middles - 1] == ranked[numpy.minimum(middles, count - 1)]))
    if len(split):
        _split_runs(ranked, order, middles[split], upper, tree, level)
    halves = numpy.empty(count, dtype=numpy.int64)
    halves[order] = upper
    return halves


def _split_runs(ranked: Keys, order: Keys, middles: Keys, upper: Keys, tree: int, level: int) -> None:
    """Set `upper` (in sorted order) over each run of equal keys holding a median in `middles`: the run's units
    before the median by tie hash are lower (0), the rest upper (1)."""
    import numpy

    firsts = numpy.searchsorted(ranked, ranked[middles], side="left")
    lengths = numpy.searchsorted(ranked, ranked[middles], side="right") - firsts
    run = numpy.repeat(numpy.arange(len(middles)), lengths)
    offsets = numpy.repeat(numpy.concatenate([[0], numpy.cumsum(lengths)[:-1]]), lengths)  # each run's, in `at`
    at = numpy.repeat(firsts, lengths) + numpy.arange(len(run)) - offsets  # the runs' places in sorted order
    by_tie = numpy.lexsort((_tie_breaks(len(ranked), tree, level, order[at]), run))
    upper[at[by_tie]] = numpy.arange(len(run)) - offsets >= (middles - firsts)[run[by_tie]]


def _tie_breaks(count: int, tree: int, level: int,
                at: numpy.typing.NDArray[numpy.int64] | None = None) -> numpy.typing.NDArray[numpy.uint64]:
    """A pseudo-random 64-bit integer per position (splitmix64 of the position plus a blake2b seed of tree and
    level): wrapping integer arithmetic, the same on every machine. `at`: only those positions', in that order."""
    import numpy

    seed = hashlib.blake2b(f"{_TIE_DOMAIN}\n{tree}\n{level}".encode(), digest_size=8).digest()
    positions = numpy.arange(count, dtype=numpy.uint64) if at is None else at.astype(numpy.uint64)
    mixed = positions + numpy.uint64(int.from_bytes(seed, "little"))
    for shift, multiplier in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        mixed = (mixed ^ (mixed >> numpy.uint64(shift))) * numpy.uint64(multiplier)
    return mixed ^ (mixed >> numpy.uint64(31))


def _leaf_neighbours(exact: Exact, order: numpy.typing.NDArray[numpy.int64],
                     starts: numpy.typing.NDArray[numpy.int64], floor: int) -> Keys:
    """Each unit's MAX_NEIGHBOURS best keys among the units of its leaf (empty slots _NONE), in no particular order."""
    import numpy

    count, dimension = exact.shape
    sizes = numpy.diff(starts)
    width = int(sizes.max())
    slots = numpy.full((len(sizes), width), count, dtype=numpy.int64)
    slots[numpy.arange(width)[None, :] < sizes[:, None]] = order
    found = numpy.full((count + 1, MAX_NEIGHBOURS), _NONE, dtype=numpy.int64)
    scale = ppb_scale(dimension)
    # A key is cosine x 2^32 + (offset x 2^32 + the position term): the second part depends on the column alone.
    # cosine x 2^32 is exact in float64 (|cosine| < 2^30), so it is formed there and converted once.
    column_terms = (_COSINE_OFFSET << _POSITION_BITS) + (_POSITION_MASK - numpy.arange(count + 1, dtype=numpy.int64))
    lowest = min((floor + _COSINE_OFFSET) << _POSITION_BITS, (1 << 63) - 1)  # a key below it: a cosine below the floor
    kept = min(width, MAX_NEIGHBOURS)
    # A chunk holds its leaves' vectors (width x dimension each) and their cosines (width x width): bound both, so a
    # model of many dimensions does not multiply the memory in hand. The buffers are this call's, reused by chunk.
    step = max(1, min(len(sizes), LEAF_CELLS // (width * max(width, dimension))))
    stacked = numpy.empty((step, width, dimension))
    products = numpy.empty((step, width, width))
    keys = numpy.empty((step, width, width), dtype=numpy.int64)
    for start in range(0, len(sizes), step):
        chunk = slots[start:start + step]
        leaves = len(chunk)
        # A leaf's empty slot (position `count`) reads unit 0's vector, not a copy of every vector with a zero row
        # added: its cosines are refused below, and its own row of keys lands in `found`'s spare last row.
        vectors = numpy.take(exact, numpy.where(chunk == count, 0, chunk), axis=0, out=stacked[:leaves])
        cosines = numpy.matmul(vectors, vectors.transpose(0, 2, 1), out=products[:leaves])
        cosines *= scale
        numpy.rint(cosines, out=cosines)
        cosines *= float(1 << _POSITION_BITS)
        chunk_keys = keys[:leaves]
        numpy.copyto(chunk_keys, cosines, casting="unsafe")  # exact: integers below 2^62
        chunk_keys += column_terms[chunk][:, None, :]
        chunk_keys.reshape(leaves, width * width)[:, ::width + 1] = _NONE  # a unit is not its own neighbour
        empty_leaves, empty_slots = numpy.nonzero(chunk == count)
        chunk_keys[empty_leaves, :, empty_slots] = _NONE
        if width > MAX_NEIGHBOURS:
            chunk_keys.partition(width - MAX_NEIGHBOURS, axis=2)
        best = chunk_keys[:, :, width - kept:]
        # Refused after the partition, not before: a cosine under the floor is under every cosine that reaches it,
        # so it is among a row's best only where the row has fewer than MAX_NEIGHBOURS that reach it.
        numpy.copyto(best, _NONE, where=best < lowest)
        found[chunk.reshape(-1), :kept] = best.reshape(-1, kept)
    return found[:count]


def _merged(best: Keys, new: Keys) -> Keys:
    """Per row, the MAX_NEIGHBOURS highest distinct keys of both."""
    import numpy

    both = numpy.concatenate([best, new], axis=1)
    both.sort(axis=1)  # in place: the joined array is this call's own (numpy.sort would copy it first)
    both[:, 1:][both[:, 1:] == both[:, :-1]] = _NONE  # the same neighbour found by two trees
    both.sort(axis=1)
    return both[:, -MAX_NEIGHBOURS:]
