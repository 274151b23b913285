"""From a validated evidence record to the review store's rows: one record row, and one text row per channel.

Channels, in the order a record holds them (a text row's `position`):

    pull-request        title, body
    review-submission   review-body
    review-thread       comment, one per stored comment (comments missing upstream included: they are
                        stored text, kept because an upstream delete never erases anything local)

The author of a thread is its first comment's author (docs/evidence-format.md). A text is stored as it is; `q`
is matched against it with the 26 ASCII letters folded and nothing else (`theurian.text.ascii_fold` here, `FOLD_SQL` as
a query reads), so `q` matches exactly as the contract says.

A row is rendered here, once, as the line the build loads and digests — all but its `ordinal`, which only the
sort decides: `ordinal_line` puts it in front. Rendering where the record is parsed keeps the build's serial
part (sort, number, write) to joining bytes, and lets a worker process do the rendering for its share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any, Final, NamedTuple

import orjson

from evidence.lake_runs import LastSeen
from evidence.records import KIND_PULL_REQUEST, KIND_REVIEW_SUBMISSION, KIND_REVIEW_THREAD
from projection.review_layout import CHANNEL_BODY, CHANNEL_COMMENT, CHANNEL_REVIEW_BODY, CHANNEL_TITLE
from theurian.text import ascii_fold

_KIND_ORDER: Final = {KIND_PULL_REQUEST: 0, KIND_REVIEW_SUBMISSION: 1, KIND_REVIEW_THREAD: 2}


class RecordFacts(NamedTuple):
    """What the concern clustering reads of a record beside its rows (`review_concerns`)."""

    created_at: str | None
    merged: bool | None
    ci_state: str | None


class Projected(NamedTuple):
    """One record, ready to load once its ordinal is known: its rows rendered but for the ordinal.

    A tuple, so a worker process hands it back at the cost of pickling its fields.
    """

    sort_key: tuple[str, int, int, str]
    record_tail: bytes  # the `records` line after `{"ordinal":N,`
    text_tails: list[bytes]  # one `texts` line tail per channel, in position order
    # Every whitespace-separated word of its folded texts, NUL-joined: one string, not a set of them, because a
    # worker's rows are pickled and unpickling a string per word cost more than reading the share. A word that
    # holds a NUL comes apart at it, which keeps the index sound: a `q` piece without a NUL still lies inside one
    # of the parts, and a `q` with one makes every block a candidate (`review_query._candidate_blocks`).
    words: str
    content_sha256: str
    # What `review.findSimilar` embeds for this record (`embedding_text`); None for a record it does not serve.
    embedding_text: str | None
    # What the concern clustering reads beside the rows (`record_facts`), kept out of the store's columns. None for
    # a record an incremental build took over from the store it replaces without reading its file: the clustering
    # reads that file for the few records it needs (`review_concerns`), so both builds find the same concerns.
    facts: RecordFacts | None = None


# A list of rows as one list per `Projected` field: how a forked reader's rows cross back (`theurian.forked`), as
# pickle reads a list of plain values at half the cost of a named tuple a row (whose class it calls per row).
ProjectedColumns = tuple[list[Any], ...]


def to_columns(rows: list[Projected]) -> ProjectedColumns:
    """`rows` as one list per field, in row order (`from_columns` gives them back)."""
    return tuple(map(list, zip(*rows, strict=True)))


def from_columns(columns: ProjectedColumns) -> list[Projected]:
    """The rows `to_columns` was given, equal and in order."""
    return list(map(tuple.__new__, repeat(Projected), zip(*columns, strict=True)))


def ordinal_line(ordinal: int, tail: bytes) -> bytes:
    """The full line of a row rendered by `project`: byte for byte `review_digest.row_line` of the same row."""
    return b'{"ordinal":%d,' % ordinal + tail


def _tail(row: dict[str, Any]) -> bytes:
    # orjson renders a dict in insertion order, so the line with `ordinal` first is `{"ordinal":N,` + this.
    return orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE)[1:]


# What `_tail` renders of a text row between its position and its body, for each channel a record can have.
_TEXT_HEADS: Final = {channel: b'"channel":%b,"body":' % orjson.dumps(channel)
                      for channel in (CHANNEL_TITLE, CHANNEL_BODY, CHANNEL_REVIEW_BODY, CHANNEL_COMMENT)}


# The stored fields of a record row besides its ordinal and what the build derives (last seen, lead position), in
# the `records` column order: what `project` takes from a record and `assemble` takes from a store it replaces.
STORED_FIELDS: Final = (
    "record_path", "record_key", "kind", "provider", "repository", "pull_request", "thread_state", "file_path",
    "source_uri", "author_id", "author_login", "content_sha256",
)


def project(record_path: str, record: Mapping[str, Any], seen: LastSeen | None, content_sha256: str) -> Projected:
    """The rows of one validated record found at `record_path`, whose file's bytes hash to `content_sha256`."""
    kind = record["kind"]
    author = _author(kind, record)
    is_thread = kind == KIND_REVIEW_THREAD
    # JSON Schema counts an integral float (1.0) as an integer, so a valid record may hold one: stored as the int.
    fields = (record_path, record["recordKey"], kind, record["provider"], record["repository"],
              int(record["pullRequest"]), record["state"] if is_thread else None,
              record["path"] if is_thread else None, record["sourceUri"], author.get("id") if author else None,
              author.get("login") if author else None, content_sha256)
    return assemble(fields, _texts(kind, record), seen, record_facts(record))


def assemble(fields: Sequence[Any], texts: Sequence[tuple[str, str]], seen: LastSeen | None,
             facts: RecordFacts | None = None, words: str | None = None) -> Projected:
    """The rows of one record from its `STORED_FIELDS` values and its (channel, text) pairs in position order:
    `project`'s, and an incremental build's for a record the store it replaces holds (the same bytes either way).
    `facts`: the record's `RecordFacts` when its file was read (None for a record taken over). `words`: its
    `Projected.words` as a build derived them from these very texts (`review_reuse`), or None to derive them."""
    (record_path, record_key, kind, provider, repository, pull_request, thread_state, file_path, source_uri,
     author_id, author_login, content_sha256) = fields
    lead = None
    for index, (_, text) in enumerate(texts):
        if text:
            lead = index
            break
    row = {
        "record_path": record_path,
        "record_key": record_key,
        "kind": kind,
        "provider": provider,
        "repository": repository,
        "pull_request": pull_request,
        "thread_state": thread_state,
        "file_path": file_path,
        "source_uri": source_uri,
        "author_id": author_id,
        "author_login": author_login,
        "last_seen_run_id": seen.run_id if seen else None,
        "last_seen_at": seen.at if seen else None,
        "lead_position": lead,
        "content_sha256": content_sha256,
    }
    sort_key = record_sort_key(repository, pull_request, kind, record_path)
    joined = joined_texts(texts)
    # One fold and one split of the texts joined by a line break, not one of each text: a line break is whitespace
    # to str.split, so no word spans two texts and the set is the union of each text's own. str.split and q.split
    # agree on what whitespace is: the index's soundness rests on it.
    if words is None:
        words = "\x00".join(set(ascii_fold(joined).split()))
    return Projected(sort_key, _tail(row), _text_tails(texts), words, content_sha256, embedding_text(kind, joined),
                     facts)


def record_sort_key(repository: str, pull_request: int, kind: str, record_path: str) -> tuple[str, int, int, str]:
    """A record's place in the store's total order (`Projected.sort_key`): by pull request, its pull-request record
    first, then its review submissions, then its threads, each by path."""
    return repository, pull_request, _KIND_ORDER[kind], record_path


def _text_tails(texts: Sequence[tuple[str, str]]) -> list[bytes]:
    """Each text's `texts` line tail: `_tail` of {position, channel, body}, its head spelled once per channel."""
    try:
        return [b'"position":%d,%b%b}\n' % (position, _TEXT_HEADS[channel], orjson.dumps(text))
                for position, (channel, text) in enumerate(texts)]
    except KeyError:  # a channel this module does not name: the plain rendering
        return [_tail({"position": position, "channel": channel, "body": text})
                for position, (channel, text) in enumerate(texts)]


def record_facts(record: Mapping[str, Any]) -> RecordFacts:
    """When the record was written (a thread's first comment, a review's submission, a pull request's creation),
    and for a pull request whether it merged and its status-check rollup."""
    kind = record["kind"]
    is_pull = kind == KIND_PULL_REQUEST
    return RecordFacts(_created_at(kind, record), record["merged"] is True if is_pull else None,
                       record["statusCheckRollupState"] if is_pull else None)


def _created_at(kind: str, record: Mapping[str, Any]) -> str | None:
    if kind == KIND_REVIEW_THREAD:
        comments = record["comments"]
        return str(comments[0]["createdAt"]) if comments and comments[0].get("createdAt") else None
    when = record.get("submittedAt") if kind == KIND_REVIEW_SUBMISSION else None
    return str(when or record["createdAt"])


def joined_texts(texts: Sequence[tuple[str, str]]) -> str:
    """A record's non-empty texts joined by line breaks, in position order: what `embedding_text` embeds."""
    return "\n".join([text for _, text in texts if text])


def embedding_text(kind: str, joined: str) -> str | None:
    """The text a record is embedded by, from its `joined_texts`: a thread's comments joined by line breaks (on
    the labelled set one vector of the joined thread ranked as well as the best of per-comment vectors, at a
    fraction of the store), a review submission's body; None for a pull request, or when the record holds no
    text."""
    if kind == KIND_PULL_REQUEST:
        return None
    return joined or None


def _texts(kind: str, record: Mapping[str, Any]) -> list[tuple[str, str]]:
    if kind == KIND_PULL_REQUEST:
        return [(CHANNEL_TITLE, record["title"]), (CHANNEL_BODY, record["body"])]
    if kind == KIND_REVIEW_SUBMISSION:
        return [(CHANNEL_REVIEW_BODY, record["body"])]
    comments: Sequence[Mapping[str, Any]] = record["comments"]
    return [(CHANNEL_COMMENT, comment["body"]) for comment in comments]


def _author(kind: str, record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    if kind != KIND_REVIEW_THREAD:
        author: Mapping[str, Any] | None = record["author"]
        return author
    comments = record["comments"]
    return comments[0]["author"] if comments else None
