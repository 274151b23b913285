"""The items of a state whose current text the secret scan hits, remembered per settled state file identity."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from knowledge.reading import ITEM_JOIN
from knowledge.secret_hits import items_with_scan_hits
from theurian.stamped_store import VerifiedStores

TOKEN = "ghp_Q7vT2mX9pL4kR8sW1nB6yH3cJ5dF0gA2eZ7u"
SETTLED = (1, 2, 3, 0, 0)  # times at the epoch: long settled
FRESH = (1, 2, 3, 1 << 62, 1 << 62)  # times far ahead of now: not settled


def _state(tmp_path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(tmp_path / "state.sqlite", isolation_level=None)
    db.executescript(
        "CREATE TABLE knowledge_items (project_id, item_id, current_revision_id);"
        "CREATE TABLE revisions (project_id, revision_id, title, body);"
        "INSERT INTO knowledge_items VALUES ('p', 'leaky', 'r1'), ('p', 'clean', 'r2'), ('p', 'titled', 'r3'),"
        " ('q', 'other', 'r4');"
        f"INSERT INTO revisions VALUES ('p', 'r1', 'Deploy', 'use {TOKEN}'), ('p', 'r2', 'Plain', 'prose only'),"
        f" ('p', 'r3', '{TOKEN}', 'x'), ('q', 'r4', 'Other', '{TOKEN}');")
    return db


def _plant_in_clean(db: sqlite3.Connection) -> None:
    db.execute("UPDATE revisions SET body = ? WHERE revision_id = 'r2'", (TOKEN,))


def test_the_items_whose_title_or_body_the_scan_hits_are_named_for_the_project_only(tmp_path: Path) -> None:
    db = _state(tmp_path)
    assert sorted(items_with_scan_hits(db, "p", ITEM_JOIN, "state.sqlite", None, None)) == ["leaky", "titled"]


def test_a_settled_identity_is_scanned_once_and_a_new_identity_is_scanned_again(tmp_path: Path) -> None:
    db, stores = _state(tmp_path), VerifiedStores()
    first = items_with_scan_hits(db, "p", ITEM_JOIN, "state.sqlite", SETTLED, stores)
    _plant_in_clean(db)  # a state file never changes in place: what is remembered stands for its identity
    assert items_with_scan_hits(db, "p", ITEM_JOIN, "state.sqlite", SETTLED, stores) == first
    rebuilt = (*SETTLED[:2], 4, *SETTLED[3:])
    assert "clean" in items_with_scan_hits(db, "p", ITEM_JOIN, "state.sqlite", rebuilt, stores)


def test_an_identity_whose_times_have_not_settled_is_scanned_on_every_call(tmp_path: Path) -> None:
    db, stores = _state(tmp_path), VerifiedStores()
    items_with_scan_hits(db, "p", ITEM_JOIN, "state.sqlite", FRESH, stores)
    _plant_in_clean(db)
    assert "clean" in items_with_scan_hits(db, "p", ITEM_JOIN, "state.sqlite", FRESH, stores)
