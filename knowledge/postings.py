"""The word channels answered in memory: the `docs` table's own postings, read once per index build.

FTS5 ranks a query by scoring every row that matches it, so a query of common words costs a pass over most of
the index per channel (~30 ms at 10,000 items on this machine). The index is immutable, so `index build` copies
FTS5's own tokenisation of every row (its `fts5vocab` instances, grouped to term frequencies per column) into
`word_postings`, and a search computes the same BM25 FTS5 computes (k1 = 1.2, b = 0.75, FTS5's idf floor and
column weights) with numpy over those arrays. tests/knowledge/test_word_postings.py pins that both rank alike.

The `trigram` channel reads the same postings: a query word of three or more characters matches every indexed
term containing it (found through `vocab_tri`, an FTS5 `trigram` table over the terms), and is scored as BM25
over the occurrences of those terms — so part words and parts of an unsegmented CJK run match.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy
import numpy.typing
import orjson

from knowledge.in_memory import BuildCache, top_rows

K1: Final = 1.2  # FTS5's bm25 constants
B: Final = 0.75
IDF_FLOOR: Final = 1e-6  # FTS5 replaces a non-positive idf by this
POSTINGS_TABLES_SQL: Final = (
    "CREATE TABLE word_postings (id INTEGER PRIMARY KEY, data BLOB NOT NULL)",
    "CREATE VIRTUAL TABLE vocab_tri USING fts5(term, tokenize = 'trigram')",
    "CREATE VIRTUAL TABLE temp.instances USING fts5vocab(main, docs, 'instance')",
)
Ints = numpy.typing.NDArray[numpy.int64]
Floats = numpy.typing.NDArray[numpy.float64]


@dataclass(frozen=True)
class Postings:
    terms: dict[str, int]  # term -> its number (vocab_tri's rowid - 1)
    starts: Ints  # term t's postings are [starts[t], starts[t + 1])
    rows: Ints  # the row (docs rowid - 1) of each posting
    title_tf: Floats
    body_tf: Floats
    norm: Floats  # each row's k1 * (1 - b + b * D / avgdl), D its token count over every column
    item_ids: tuple[str, ...]


def write_postings(index: sqlite3.Connection) -> str:
    """Copy FTS5's tokenisation of `docs` into `word_postings` and `vocab_tri`; returns the blob's sha256."""
    for statement in POSTINGS_TABLES_SQL:  # one by one: executescript would commit the build's transaction
        index.execute(statement)
    item_ids = [row[0] for row in index.execute("SELECT item_id FROM docs ORDER BY rowid")]
    terms: list[str] = []
    starts: list[int] = []
    rows: list[int] = []
    title: list[int] = []
    body: list[int] = []
    for term, doc, column, count in index.execute(
        "SELECT term, doc, col, count(*) FROM temp.instances GROUP BY term, doc, col ORDER BY term, doc"
    ):
        if not terms or terms[-1] != term:
            terms.append(term)
            starts.append(len(rows))
        if rows and len(rows) > starts[-1] and rows[-1] == doc - 1:
            (title if column == "title" else body)[-1] += count
            continue
        rows.append(doc - 1)
        title.append(count if column == "title" else 0)
        body.append(count if column != "title" else 0)
    starts.append(len(rows))
    index.execute("DROP TABLE temp.instances")
    index.executemany("INSERT INTO vocab_tri (rowid, term) VALUES (?, ?)", ((n + 1, t) for n, t in enumerate(terms)))
    blob = (
        orjson.dumps({"terms": terms, "itemIds": item_ids})
        + b"\0"
        + b"".join(numpy.asarray(a, "<i8").tobytes() for a in (starts, rows, title, body))
    )
    index.execute("INSERT INTO word_postings VALUES (1, ?)", (blob,))
    return hashlib.sha256(blob).hexdigest()


_cache: BuildCache[Postings | None] = BuildCache()


def load_postings(index: sqlite3.Connection, build_id: str, digest: str) -> Postings | None:
    """The build's postings (cached per build and digest), or None when they do not match the recorded digest."""
    return _cache.get(build_id, digest, lambda: _read(index, digest))


def _read(index: sqlite3.Connection, digest: str) -> Postings | None:
    row = index.execute("SELECT data FROM word_postings WHERE id = 1").fetchone()
    if row is None or hashlib.sha256(row[0]).hexdigest() != digest:
        return None
    head, _, arrays = bytes(row[0]).partition(b"\0")
    document = orjson.loads(head)
    terms, item_ids = document["terms"], tuple(document["itemIds"])
    values = numpy.frombuffer(arrays, dtype="<i8").astype(numpy.int64)
    starts = values[: len(terms) + 1]
    postings = (len(values) - len(starts)) // 3
    rows, title, body = (values[len(starts) + n * postings : len(starts) + (n + 1) * postings] for n in range(3))
    length = numpy.bincount(rows, weights=title + body, minlength=len(item_ids)).astype(numpy.float64)
    average = float(length.sum()) / len(item_ids) if item_ids else 1.0
    norm = K1 * (1 - B + B * length / average)  # FTS5's order of operations, so the scores are its to the bit
    return Postings(
        {t: n for n, t in enumerate(terms)},
        starts,
        rows,
        title.astype(numpy.float64),
        body.astype(numpy.float64),
        norm,
        item_ids,
    )


def bm25_ranked(
    postings: Postings, phrases: Sequence[Sequence[int]], title_weight: float, body_weight: float, depth: int
) -> list[str]:
    """Item ids by FTS5's BM25, best first (ties by row), at most depth; each phrase is the term numbers whose
    occurrences count for it (one term for a word, every term containing it for a part word)."""
    count = len(postings.item_ids)
    if count == 0:
        return []
    norm = postings.norm
    score = numpy.zeros(count, dtype=numpy.float64)
    matched = numpy.zeros(count, dtype=bool)
    for terms in phrases:
        spans = [numpy.arange(postings.starts[t], postings.starts[t + 1]) for t in terms]
        picked = numpy.concatenate(spans) if spans else numpy.zeros(0, dtype=numpy.int64)
        weights = title_weight * postings.title_tf[picked] + body_weight * postings.body_tf[picked]
        freq = numpy.bincount(postings.rows[picked], weights=weights, minlength=count)
        hit = freq > 0
        hits = int(hit.sum())
        if hits == 0:
            continue
        idf = float(numpy.log((count - hits + 0.5) / (hits + 0.5)))
        idf = idf if idf > 0 else IDF_FLOOR
        score[hit] += idf * (freq[hit] * (K1 + 1.0)) / (freq[hit] + norm[hit])
        matched |= hit
    return [postings.item_ids[row] for row in top_rows(numpy.flatnonzero(matched), score, depth).tolist()]

