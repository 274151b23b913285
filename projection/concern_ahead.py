"""The concern clustering of an incremental build, started before the store is written: on a thread of its own,
while the build takes the unchanged records over from the store it replaces.

Taking 99,000 records over is Python on one core (their texts read back and rendered), and the clustering that a
1 % change makes the build redo is mostly numpy, which releases the GIL: run one after the other they leave a core
idle for seconds. What the clustering reads is known before the texts are: which records there will be and in
what order (the changed records read, and the unchanged ones' stored columns: their sort keys, and whether they
hold a text, `lead_position`), each one's words (the file record's, `review_reuse`) and each unit's stored vector
(the replaced store's, by content hash, or embedded now: `review_vectors.embedded_ahead`, which the build's
`vectors` then take, counted as embedded). So the input is predicted from them, and clustered here.

It is a prediction, never trusted as one: the concern stage computes its own input from the rows the build wrote
and takes this clustering only when that input digests the same (`concern_reuse.input_digest`: the clustering's
code, the threshold and every unit's vector text in order), which makes it the clustering that stage would form
(`cluster` is a pure function of that input). Anything else — the take-over falling back to reading the files,
a prediction that cannot be made, a fault on the thread — leaves the stage to cluster as before.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from evidence.records import KIND_PULL_REQUEST
from projection.concern_reuse import input_digest
from projection.review_concerns import CONCERN_SIMILARITY, clustered, concern_units
from projection.review_rows import Projected, record_sort_key
from projection.review_vectors import PreviousStore, embedded_ahead
from theurian.embedding import EmbeddingModel

if TYPE_CHECKING:
    from projection.review_concerns import Clustered


class ClusteringAhead:
    """A clustering started by `start` on a thread, and the vectors it embedded; `clustering_for` and `embedded`
    wait for it. Nothing started: both answer at once, with nothing."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._embedded: Future[dict[str, str]] = Future()
        self._clustered: Future[Clustered | None] = Future()

    def start(self, read: Sequence[Projected], kept: Sequence[tuple[Any, ...]], words: Mapping[str, str],
              previous: PreviousStore, model: EmbeddingModel) -> None:
        """Predict the clustering's input and cluster it on a thread. `read`: the records read from the lake;
        `kept`: the stored columns of those taken over (`review_reuse.take_over`'s `fields_read`); `words`: the
        file record's words by record path; `previous`: what the store being replaced lends."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, args=(list(read), kept, words, previous, model),
                                        name="concern-ahead")
        self._thread.start()

    def embedded(self) -> dict[str, str]:
        """Content hash → stored vector of each record read that the replaced store lacked, as embedded here."""
        if self._thread is None:
            return {}
        try:
            return self._embedded.result()
        except Exception:  # noqa: BLE001 - an optimisation's fault: the build embeds them itself, raising it there
            return {}

    def clustering_for(self, digest: str, units: int) -> Clustered | None:
        """The clustering formed here when its input digests as `digest` over `units` units, else None."""
        if self._thread is None:
            return None
        try:
            found = self._clustered.result()
        except Exception:  # noqa: BLE001 - an optimisation's fault: the stage clusters itself, raising it there
            return None
        if found is None or not found[0].reusable_for(digest, units):
            return None
        return found

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def _run(self, read: list[Projected], kept: Sequence[tuple[Any, ...]], words: Mapping[str, str],
             previous: PreviousStore, model: EmbeddingModel) -> None:
        # The thread's top level: whatever it raises is handed to the waiters, who fall back to doing it themselves.
        try:
            made = embedded_ahead(read, model, previous.vectors)
        except BaseException as exc:  # noqa: BLE001 - handed on, as above
            self._embedded.set_exception(exc)
            self._clustered.set_exception(exc)
            return
        self._embedded.set_result(made)
        try:
            self._clustered.set_result(_clustered(read, kept, words, previous, made, model.identity.dimension))
        except BaseException as exc:  # noqa: BLE001 - handed on, as above
            self._clustered.set_exception(exc)


@contextlib.contextmanager
def clustering_ahead() -> Iterator[ClusteringAhead]:
    """A `ClusteringAhead` whose thread, if started, has ended when the block does, however it ends."""
    ahead = ClusteringAhead()
    try:
        yield ahead
    finally:
        ahead.join()


def _clustered(read: list[Projected], kept: Sequence[tuple[Any, ...]], words: Mapping[str, str],
               previous: PreviousStore, made: Mapping[str, str], dimension: int) -> Clustered | None:
    """The predicted input clustered, or None: not predictable, or the replaced store's own clustering is this
    input's (the stage takes that over)."""
    # (sort key, content hash, embedded, words): what `build_concerns` reads of each row the build will write.
    rows = [(item.sort_key, item.content_sha256, item.embedding_text is not None, item.words) for item in read]
    for values in kept:
        (record_path, _, kind, _, repository, pull_request, *_, content_sha256, lead) = values[1:]
        found = words.get(record_path)
        if found is None:
            return None
        # `review_rows.embedding_text`: a record other than a pull request, holding a non-empty text.
        rows.append((record_sort_key(repository, pull_request, kind, record_path), content_sha256,
                     kind != KIND_PULL_REQUEST and lead is not None, found))
    rows.sort(key=lambda row: row[0])
    vectors: dict[int, str] = {}
    for ordinal, (_, content_sha256, embedded, _) in enumerate(rows):
        if embedded:
            stored = previous.vectors.get(content_sha256) or made.get(content_sha256)
            if stored is None:
                return None
            vectors[ordinal] = stored
    stored_vectors = [vectors[ordinal] for ordinal in concern_units(vectors, [row[3] for row in rows])]
    digest = input_digest(stored_vectors, CONCERN_SIMILARITY)
    if previous.clustering is not None and previous.clustering.reusable_for(digest, len(stored_vectors)):
        return None
    return clustered(stored_vectors, dimension, digest)
