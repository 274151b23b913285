"""The word-pair index beside the word-block index: for each block of BLOCK_RECORDS ordinals, every pair of
adjacent words of its folded texts, each word cut to PAIR_CHARS characters (the first word's last ones, the
second word's first ones), distinct, sorted, and NUL-delimited (`\\x00a b\\x00c d\\x00`).

Why it is sound. A `q` whose pieces (`q.split()`) p and p' are neighbours matches a text only where the word
holding p ends with p and is followed, across whitespace only, by the word holding p', which starts with p'. So
the pair (end of that word, start of the next) lies in the text's block, and it is known from `q` alone wherever
the cut is: the end of a word ending with p is p's end when p has PAIR_CHARS characters or more, or when p is the
whole word (q has whitespace before it too); the same for the start of the next. A block lacking such a pair
cannot hold a match; a neighbour pair whose cut is unknown (a piece too short at q's edge) tests nothing.

It is built by DuckDB from the loaded `texts`, in SQL (no Python work per text): the texts are folded with
FOLD_SQL, every other Python whitespace character is translated to a space, and the text is split at spaces, so
its words are exactly `str.split`'s (a test compares them on every whitespace character). Cut words keep the
index small: on real text almost every adjacent pair is distinct, and whole pairs would repeat the texts.

A build runs it on a thread of its own (`pairs_building`) while the concern stage runs: DuckDB releases the GIL
while it splits and aggregates, and the concern stage is mostly Python, so the two overlap rather than add up. The
pairs are still digested before the concerns, as the stamp's table order says: the concern stage digests into a
`HeldDigest`, released into the build's digest once the pairs are in.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Final

import duckdb

from projection.review_digest import LineDigest, row_line
from projection.review_layout import BLOCK_RECORDS, FOLD_SQL, PAIR_COLUMNS
from theurian.interrupts import Interrupts

PAIR_CHARS: Final = 4
PAIR_TABLE: Final = "word_pairs"
# Every character str.split() splits at but the space: DuckDB's split takes one separator, so these become spaces.
# Written out, not computed: testing all 1,114,112 code points cost every process that imports this 73 ms. A test
# computes it from `str.isspace` over every code point, so a Python whose Unicode data differs fails there.
OTHER_WHITESPACE: Final = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)

# The other whitespace made spaces by one regular expression (RE2, a class of code points), not `translate`: the
# same text out, and at 50,000 records (34 MB of text) 0.15 s where `translate` over 29 characters took 0.60 s.
_OTHER_WHITESPACE_CLASS: Final = "[" + "".join(f"\\x{{{ord(character):x}}}" for character in OTHER_WHITESPACE) + "]"
_WORDS_SQL: Final = (
    f"list_filter(string_split(regexp_replace({FOLD_SQL}, ?, ' ', 'g'), ' '), lambda w: w <> '')"
)
# Each word beside the next by two lists unnested side by side (all but the last word, all but the first), cut by
# plain functions: at 50,000 records 0.79 s where a lambda over each list's positions took 0.92 s, the same rows.
_BUILD_SQL: Final = f"""
INSERT INTO {PAIR_TABLE}
WITH split AS (SELECT ordinal // {BLOCK_RECORDS} AS block, {_WORDS_SQL} AS w FROM texts),
neighbours AS (SELECT block, unnest(w[:-2]) AS earlier, unnest(w[2:]) AS later FROM split),
pairs AS (
    SELECT DISTINCT block, concat(right(earlier, {PAIR_CHARS}), ' ', left(later, {PAIR_CHARS})) AS pair
    FROM neighbours
)
SELECT block, chr(0) || string_agg(pair, chr(0) ORDER BY pair) || chr(0) FROM pairs GROUP BY block ORDER BY block
"""  # noqa: S608 - constants only


def words_sql_params() -> list[str]:
    """The parameters of the word split (one: the class of `OTHER_WHITESPACE`)."""
    return [_OTHER_WHITESPACE_CLASS]


def split_sql() -> str:
    """An expression over a column `body`: its folded words, as `str.split` gives them (`words_sql_params`)."""
    return _WORDS_SQL


def build_pairs(connection: duckdb.DuckDBPyConnection, digest: LineDigest) -> None:
    """Fill `word_pairs` from the loaded `texts`, then digest its rows in block order (the stamp covers them)."""
    insert_pairs(connection)
    digest_pairs(connection, digest)


def insert_pairs(connection: duckdb.DuckDBPyConnection) -> None:
    """Fill `word_pairs` from the loaded `texts`."""
    connection.execute(_BUILD_SQL, words_sql_params())


def digest_pairs(connection: duckdb.DuckDBPyConnection, digest: LineDigest) -> None:
    """`word_pairs`' rows into `digest`, in block order."""
    digest.table(PAIR_TABLE)
    cursor = connection.execute(f"SELECT {', '.join(PAIR_COLUMNS)} FROM {PAIR_TABLE} ORDER BY block")  # noqa: S608
    while batch := cursor.fetchmany(1024):
        for values in batch:
            digest.line(row_line(PAIR_COLUMNS, values))


@contextlib.contextmanager
def pairs_building(connection: duckdb.DuckDBPyConnection, digest: LineDigest, interrupts: Interrupts,
                   texts_loaded: Future[None], digest_free: Future[None]) -> Iterator[None]:
    """`word_pairs` filled on a thread of its own, over a cursor of `connection`, once `texts_loaded` is done
    (`review_load.write_rows` completes it), while the block runs and the later tables load; then digested into
    `digest` once `digest_free` is done: the block completes it when every earlier table is digested, and must
    not touch `digest` after that until it ends. Holding the pairs' lines instead would keep a table the size of
    the texts' distinct word pairs in memory.

    The block must complete both futures or raise. It ends with the pairs built and digested (their failure, or
    the texts load's, raised), or, if the block raised, with both futures cancelled and the build interrupted and
    waited for, so the connection is free to close. A Ctrl-C meanwhile is deferred, as
    `review_load.Loader.abandon`'s.
    """
    cursor = connection.cursor()  # a connection of its own to the same database: one per thread
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="review-pairs")
    try:
        future = pool.submit(_when_ready, texts_loaded, digest_free, cursor, digest)
        try:
            yield
            future.result()
        except BaseException:
            texts_loaded.cancel()  # a pairs thread still waiting stops waiting
            digest_free.cancel()
            with interrupts.deferred():
                while not future.done():
                    with contextlib.suppress(KeyboardInterrupt):
                        cursor.interrupt()
                        wait([future], timeout=0.05)
            raise
    finally:
        # Again here, for a Ctrl-C that lands after the thread started but before the inner `try` (or in its
        # `except` before the cancels): the thread would wait on `texts_loaded` forever, and so would the pool's
        # shutdown, or the interpreter's at exit (seen once: a build stopped by SIGTERM that never exited).
        # Completed futures ignore a cancel, so a build that ended well is not touched.
        texts_loaded.cancel()
        digest_free.cancel()
        pool.shutdown(wait=True)
        cursor.close()


def _when_ready(texts_loaded: Future[None], digest_free: Future[None], cursor: duckdb.DuckDBPyConnection,
                digest: LineDigest) -> None:
    texts_loaded.result()  # raises as the texts load did (or CancelledError)
    insert_pairs(cursor)
    digest_free.result()
    digest_pairs(cursor, digest)


def pair_keys(q: str) -> list[str]:
    """The pairs a block must hold to hold a match of `q` (NUL-delimited, as stored): one per neighbour pieces
    whose cut is known from `q`. None for a `q` of fewer than two pieces, or holding a NUL."""
    pieces = q.split()
    if len(pieces) < 2 or "\x00" in q:
        return []
    whole_first = q[:1].isspace()  # whitespace before the first piece: it starts a word too
    whole_last = q[-1:].isspace()
    keys = []
    for index in range(len(pieces) - 1):
        left, right = pieces[index], pieces[index + 1]
        left_known = len(left) >= PAIR_CHARS or index > 0 or whole_first
        right_known = len(right) >= PAIR_CHARS or index + 1 < len(pieces) - 1 or whole_last
        if left_known and right_known:
            keys.append(f"\x00{left[-PAIR_CHARS:]} {right[:PAIR_CHARS]}\x00")
    return keys
