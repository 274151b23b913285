"""The in-memory word channels rank exactly as FTS5's own BM25 does over the same index."""

from __future__ import annotations

import contextlib
import random
import sqlite3
from pathlib import Path

import pytest

from knowledge.apply import apply_migrations
from knowledge.channels import sql_word_channels, word_channels
from knowledge.index import build_index, open_index
from knowledge.index_pointer import read_index_pointer
from knowledge.postings import load_postings
from tests.knowledge.authoring import MigrationWriter

VOCABULARY = ("lock", "mutex", "order", "cache", "token", "log", "retry", "backoff", "jitter", "Café", "naïve",
              "ledger", "queue", "policy", "review", "deadlock", "the", "a", "of", "認証", "ポリシー")


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, sqlite3.Connection]:
    root = tmp_path_factory.mktemp("postings") / "project"
    chooser = random.Random(7)  # a fixed seed: the same corpus on every run
    writer = MigrationWriter(root, created_at="2026-08-01T00:00:00Z")
    for n in range(120):
        body = " ".join(chooser.choice(VOCABULARY) for _ in range(chooser.randint(3, 60)))
        title = " ".join(chooser.choice(VOCABULARY) for _ in range(chooser.randint(1, 5)))
        writer.item(f"convention.item-{n:03d}", body, title=title, kind="convention")
    writer.write("random")
    apply_migrations(root)
    build_index(root, "internal")
    pointer = read_index_pointer(root)
    assert pointer is not None
    connection = open_index(root, pointer)
    assert connection is not None
    return root, connection


@pytest.mark.parametrize("query", ["lock", "lock order", "cache token log", "CAFE", "naive café", "the", "a of",
                                   "deadlock mutex order ledger", "unknownword", "retry backoff jitter queue policy",
                                   "認証", "ポリシー lock"])
def test_the_in_memory_lexical_and_title_channels_rank_as_fts5_does(
        index: tuple[Path, sqlite3.Connection], query: str) -> None:
    root, connection = index
    pointer = read_index_pointer(root)
    assert pointer is not None
    postings = load_postings(connection, pointer.build_id, pointer.postings_sha256)
    assert postings is not None
    for depth in (5, 200):
        in_memory = word_channels(connection, postings, query, depth, ("lexical", "title"))
        assert in_memory == sql_word_channels(connection, query, depth)
    assert in_memory["lexical"] or query == "unknownword"


def test_postings_that_do_not_match_their_digest_are_not_loaded(index: tuple[Path, sqlite3.Connection]) -> None:
    root, connection = index
    pointer = read_index_pointer(root)
    assert pointer is not None
    assert load_postings(connection, "another-build", "0" * 64) is None
    with contextlib.closing(sqlite3.connect(":memory:")) as empty:
        empty.execute("CREATE TABLE word_postings (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")
        assert load_postings(empty, "empty-build", pointer.postings_sha256) is None
