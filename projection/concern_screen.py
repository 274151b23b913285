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
    """The units in leaf order and where each leaf starts (the last entry is the count)."""
    import numpy

    count = len(exact)
    depth = 0
    while (count >> depth) > LEAF_UNITS:
        depth += 1
    # |projection| <= dimension x 2^quantum_bits x 128 < 2^53: exact integers, whatever BLAS does.
    projections = exact @ _direction_matrix(tree, depth, exact.shape[1])
    order = numpy.arange(count, dtype=numpy.int64)
    starts = numpy.array([0, count], dtype=numpy.int64)
    for level in range(depth):
        leaf = numpy.repeat(numpy.arange(len(starts) - 1), numpy.diff(starts))
        # Within each leaf, by projection; equal projections by a hash of position, other for every tree and level.
        ties = _tie_breaks(count, tree, level)
        order = order[numpy.lexsort((ties[order], projections[order, level], leaf))]
        starts = numpy.sort(numpy.concatenate([starts, (starts[:-1] + starts[1:]) // 2]))
    return order, starts


def _tie_breaks(count: int, tree: int, level: int) -> numpy.typing.NDArray[numpy.uint64]:
    """A pseudo-random 64-bit integer per position (splitmix64 of the position plus a blake2b seed of tree and
    level): wrapping integer arithmetic, the same on every machine."""
    import numpy

    seed = hashlib.blake2b(f"{_TIE_DOMAIN}\n{tree}\n{level}".encode(), digest_size=8).digest()
    mixed = numpy.arange(count, dtype=numpy.uint64) + numpy.uint64(int.from_bytes(seed, "little"))
    for shift, multiplier in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        mixed = (mixed ^ (mixed >> numpy.uint64(shift))) * numpy.uint64(multiplier)
    return mixed ^ (mixed >> numpy.uint64(31))


def _leaf_neighbours(exact: Exact, order: numpy.typing.NDArray[numpy.int64],
                     starts: numpy.typing.NDArray[numpy.int64], floor: int) -> Keys:
    """Each unit's MAX_NEIGHBOURS best keys among the units of its leaf (empty slots _NONE)."""
    import numpy

    count, dimension = exact.shape
    sizes = numpy.diff(starts)
    width = int(sizes.max())
    slots = numpy.full((len(sizes), width), count, dtype=numpy.int64)
    slots[numpy.arange(width)[None, :] < sizes[:, None]] = order
    found = numpy.full((count + 1, MAX_NEIGHBOURS), _NONE, dtype=numpy.int64)
    scale = ppb_scale(dimension)
    # A chunk holds its leaves' vectors (width x dimension each) and their cosines (width x width): bound both, so a
    # model of many dimensions does not multiply the memory in hand.
    step = max(1, LEAF_CELLS // (width * max(width, dimension)))
    for start in range(0, len(sizes), step):
        chunk = slots[start:start + step]
        # A leaf's empty slot (position `count`) reads unit 0's vector, not a copy of every vector with a zero row
        # added: its cosines are refused below, and its own row of keys lands in `found`'s spare last row.
        stacked = exact[numpy.where(chunk == count, 0, chunk)]
        products = stacked @ stacked.transpose(0, 2, 1)
        products *= scale
        cosines = numpy.rint(products, out=products).astype(numpy.int64)
        refused = (cosines < floor) | (chunk[:, None, :] == chunk[:, :, None]) | (chunk[:, None, :] == count)
        cosines += _COSINE_OFFSET
        cosines <<= _POSITION_BITS
        keys = numpy.bitwise_or(cosines, _POSITION_MASK - chunk[:, None, :], out=cosines)
        keys[refused] = _NONE
        if width > MAX_NEIGHBOURS:
            keys = numpy.partition(keys, width - MAX_NEIGHBOURS, axis=2)[:, :, width - MAX_NEIGHBOURS:]
        found[chunk.reshape(-1), :keys.shape[2]] = keys.reshape(-1, keys.shape[2])
    return found[:count]


def _merged(best: Keys, new: Keys) -> Keys:
    """Per row, the MAX_NEIGHBOURS highest distinct keys of both."""
    import numpy

    both = numpy.concatenate([best, new], axis=1)
    both.sort(axis=1)  # in place: the joined array is this call's own (numpy.sort would copy it first)
    both[:, 1:][both[:, 1:] == both[:, :-1]] = _NONE  # the same neighbour found by two trees
    both.sort(axis=1)
    return both[:, -MAX_NEIGHBOURS:]
