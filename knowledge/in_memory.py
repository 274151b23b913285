"""What a search keeps in memory per index build, and the top-k selection every in-memory channel shares.

An index file is immutable, so what a search reads from it (postings, vectors, the summary tree) is read once per
build and kept, keyed by the build id and the digest the pointer recorded for it; a few builds are kept so a
daemon serving several projects does not reload on every call, the least recently used going first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Final, Generic, TypeVar

import numpy
import numpy.typing

CACHED_INDEXES: Final = 4
Ints = numpy.typing.NDArray[numpy.int64]
Value = TypeVar("Value")


class BuildCache(Generic[Value]):
    """One kind of per-build value, at most CACHED_INDEXES of them."""

    def __init__(self) -> None:
        self._values: OrderedDict[tuple[str, str], Value] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, build_id: str, digest: str, load: Callable[[], Value]) -> Value:
        """The value for this build and digest, loading it (outside the lock) the first time."""
        key = (build_id, digest)
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
        value = load()
        with self._lock:
            self._values[key] = value
            while len(self._values) > CACHED_INDEXES:
                self._values.popitem(last=False)
        return value


def top_rows(candidates: Ints, score: numpy.typing.NDArray[numpy.floating], depth: int) -> Ints:
    """The `depth` candidates of highest score, best first, ties by row — as a full sort would give them, without
    sorting all: every candidate scoring at least the depth-th best score is kept, then those few are sorted."""
    if len(candidates) > depth:
        threshold = numpy.partition(score[candidates], len(candidates) - depth)[len(candidates) - depth]
        candidates = candidates[score[candidates] >= threshold]
    ordered: Ints = candidates[numpy.lexsort((candidates, -score[candidates]))][:depth]
    return ordered
