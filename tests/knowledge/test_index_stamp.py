"""The retrieval index's build stamp over real SQLite files: an index built here opens; one copied from another
installation, one whose row was edited and whose every unkeyed digest was recomputed, one of the earlier format,
one with a planted object, a value no build writes, or a write-ahead log beside it is refused, and
`index status` says which; the verify-once cache per file identity."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from knowledge.apply import apply_migrations
from knowledge.errors import IndexDamagedError
from knowledge.index import build_index
from knowledge.index_pointer import INDEX_POINTER_NAME, load_index_pointer, read_index_pointer
from knowledge.index_stamp import FOREIGN_VALUE, NOT_THE_NAMED_BUILD, STORE_KIND, verified
from knowledge.index_status import CURRENT, FOREIGN, SUPERSEDED, UNREADABLE, index_status
from knowledge.postings import load_postings, write_postings
from knowledge.raptor_store import _digest as raptor_digest
from knowledge.retrieval import SearchRequest, search
from tests.knowledge.authoring import copy_sample
from tests.support.installation import Installation
from theurian.installation import build_stamp_secret
from theurian.project import Project
from theurian.stamp import FOREIGN_STAMP, NO_STAMP, ROWS_NOT_STAMPED
from theurian.stamped_store import SETTLED_NS, SQLITE_WAL_SUFFIX, WAL_BESIDE, VerifiedStores, file_identity, wal_path

STATE = Path(".theurian/state")
ITEM = "architecture.auth-policy"
PLANTED = "Planted: disable auth"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    built = copy_sample(tmp_path / "sample")
    apply_migrations(built)
    build_index(built, "internal", raptor=True)
    return built


def _pointer_document(root: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((root / STATE / INDEX_POINTER_NAME).read_text(encoding="utf-8"))
    return document


def _index_file(root: Path) -> Path:
    return root / STATE / str(_pointer_document(root)["indexFile"])


def _rewrite_pointer(root: Path, **changes: object) -> None:
    document = _pointer_document(root) | changes
    (root / STATE / INDEX_POINTER_NAME).write_text(json.dumps(document), encoding="utf-8")


def _edit(root: Path, *statements: str) -> None:
    with contextlib.closing(sqlite3.connect(_index_file(root), isolation_level=None)) as index:
        for statement in statements:
            index.execute(statement)


def _status(root: Path) -> tuple[str, str | None]:
    report = index_status(root, "internal")
    return report.state, report.reason


def _search(root: Path, query: str = "auth", stores: VerifiedStores | None = None) -> dict[str, Any]:
    from datetime import UTC, datetime

    request = SearchRequest(query, 10, 2000, datetime.now(UTC), as_of=False)
    return search(Project("demo", root), "internal", request, stores)


def _forge_postings(root: Path) -> None:
    """What anyone who can write `.theurian/state/` could do: retitle an item in the index, rebuild the postings
    from it, and write the new postings digest into `meta` and the pointer, so every unkeyed digest agrees."""
    with contextlib.closing(sqlite3.connect(_index_file(root), isolation_level=None)) as index:
        index.execute("UPDATE docs SET title = ? WHERE item_id = ?", (PLANTED, ITEM))
        index.execute("DROP TABLE word_postings")
        index.execute("DROP TABLE vocab_tri")
        digest = write_postings(index)
        index.execute("UPDATE meta SET value = ? WHERE key = 'postings_sha256'", (digest,))
        assert load_postings(index, _pointer_document(root)["buildId"], digest) is not None  # digests agree
    _rewrite_pointer(root, postingsSha256=digest)


def test_an_index_built_here_is_current_and_ranks(root: Path) -> None:
    assert _status(root) == (CURRENT, None)
    retrieval = _search(root)["retrieval"]
    assert retrieval["indexed"] is True and retrieval["fallbackReason"] is None


def test_an_index_built_by_another_installation_is_refused_as_foreign(root: Path, tmp_path: Path) -> None:
    elsewhere = Installation(tmp_path / "another-installation")
    source = copy_sample(tmp_path / "elsewhere")
    with elsewhere.in_process():
        apply_migrations(source)
        build_index(source, "internal")
    copied = tmp_path / "copied"
    shutil.copytree(source, copied)
    apply_migrations(copied)  # the state is rebuilt as this installation's (the same hash); the index is not
    state, reason = _status(copied)
    assert (state, reason) == (FOREIGN, FOREIGN_STAMP)
    assert "refused, not built by this installation" in index_status(copied, "internal").describe()
    response = _search(copied)
    assert response["retrieval"]["fallbackReason"] == "index-unreadable" and response["count"] >= 1


def test_an_index_whose_row_was_edited_and_digests_recomputed_is_refused(root: Path) -> None:
    _forge_postings(root)
    assert _status(root) == (UNREADABLE, ROWS_NOT_STAMPED)
    response = _search(root, PLANTED)
    assert response["retrieval"]["fallbackReason"] == "index-unreadable"


def test_a_summary_title_planted_with_its_tree_digest_recomputed_never_reaches_a_raptor_path(root: Path) -> None:
    """The one text a search serves from the index itself is a summary node's title (`raptorPath`)."""
    with contextlib.closing(sqlite3.connect(_index_file(root), isolation_level=None)) as index:
        index.execute("UPDATE raptor_nodes SET title = ?", (PLANTED,))
        nodes = index.execute("SELECT * FROM raptor_nodes ORDER BY position").fetchall()
        members = index.execute("SELECT node, item FROM raptor_members ORDER BY rowid").fetchall()
        (blob,) = index.execute("SELECT data FROM raptor_matrix WHERE id = 1").fetchone()
        digest = raptor_digest(nodes, members, blob)
        index.execute("UPDATE meta SET value = ? WHERE key = 'raptor_sha256'", (digest,))
    _rewrite_pointer(root, raptorSha256=digest)
    assert _status(root) == (UNREADABLE, ROWS_NOT_STAMPED)
    response = _search(root)
    assert response["retrieval"]["fallbackReason"] == "index-unreadable"
    assert all("raptorPath" not in hit for hit in response["results"]) and PLANTED not in json.dumps(response)


def test_an_index_of_the_format_before_the_stamp_is_superseded(root: Path) -> None:
    # Format 2 is this one without the stamp table and the two channel digests `meta` gained with it.
    _edit(root, "DROP TABLE build_stamp", "DELETE FROM meta WHERE key IN ('postings_sha256', 'raptor_sha256')",
          "UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    _rewrite_pointer(root, schemaVersion=2)
    assert read_index_pointer(root) is None and load_index_pointer(root) is not None
    report = index_status(root, "internal")
    assert report.state == SUPERSEDED
    assert "superseded, built in an earlier index format" in report.describe()
    assert report.describe().endswith("(`theurian index build`)")
    assert _search(root)["retrieval"]["fallbackReason"] == "index-unreadable"
    build_index(root, "internal")
    assert _status(root) == (CURRENT, None)


def test_an_index_of_this_format_without_a_stamp_is_refused_as_not_built_here(root: Path) -> None:
    _edit(root, "DROP TABLE build_stamp")
    assert _status(root) == (FOREIGN, NO_STAMP)


def test_an_object_no_build_creates_is_refused(root: Path) -> None:
    _edit(root, "CREATE VIEW planted AS SELECT 1")
    assert _status(root) == (UNREADABLE, ROWS_NOT_STAMPED)


def test_a_value_of_a_type_no_build_writes_is_refused_not_a_crash(root: Path) -> None:
    _edit(root, "UPDATE vocab_tri_docsize SET sz = 1.5 WHERE id = 1")
    assert _status(root) == (UNREADABLE, FOREIGN_VALUE)


@pytest.mark.parametrize("change", [
    {"channels": ["lexical", "title", "trigram"]},  # the summary and dense channels hidden
    {"raptorSha256": None},
    {"denseSha256": "0" * 64},
    {"buildId": "01K50000000000000000000000"},
])
def test_a_pointer_that_states_what_the_stamped_meta_does_not_is_refused(root: Path, change: dict[str, Any]) -> None:
    _rewrite_pointer(root, **change)
    assert _status(root) == (UNREADABLE, NOT_THE_NAMED_BUILD)
    assert _search(root)["retrieval"]["fallbackReason"] == "index-unreadable"


def test_a_write_ahead_log_beside_the_index_is_refused(root: Path) -> None:
    path = _index_file(root)
    wal_path(path, SQLITE_WAL_SUFFIX).write_bytes(b"")
    assert _status(root) == (UNREADABLE, WAL_BESIDE)


def test_the_index_is_verified_once_per_file_identity_and_again_when_the_file_changes(root: Path) -> None:
    stores = VerifiedStores()
    path = _index_file(root)
    identity = file_identity(path)
    later = max(identity[3], identity[4]) + SETTLED_NS  # when the file's times are settled
    shelf = stores.shelf(STORE_KIND)
    with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as index:
        build_id = verified(stores, path, identity, index, later)
        assert shelf.get(str(path), identity, build_stamp_secret()) == build_id
    _forge_postings(root)
    changed = file_identity(path)
    assert changed != identity
    with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as index:
        assert verified(stores, path, identity, index, later) == build_id  # remembered: not digested again
        for _ in range(2):  # the refusal is remembered for the changed identity too
            with pytest.raises(IndexDamagedError, match=ROWS_NOT_STAMPED):
                verified(stores, path, changed, index, later + SETTLED_NS)
    assert isinstance(shelf.get(str(path), changed, build_stamp_secret()), IndexDamagedError)
    # Another cache (another daemon) shares nothing with this one.
    assert VerifiedStores().shelf(STORE_KIND).get(str(path), identity, build_stamp_secret()) is None


def test_an_index_changed_after_a_daemon_verified_it_is_refused_on_its_next_search(root: Path) -> None:
    stores = VerifiedStores()
    assert _search(root, stores=stores)["retrieval"]["indexed"] is True
    _forge_postings(root)
    assert _search(root, stores=stores)["retrieval"]["fallbackReason"] == "index-unreadable"


def test_a_file_changed_within_the_settling_time_is_verified_on_every_call(root: Path) -> None:
    stores = VerifiedStores()
    path = _index_file(root)
    identity = file_identity(path)
    with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as index:
        verified(stores, path, identity, index, max(identity[3], identity[4]) + SETTLED_NS - 1)
    assert len(stores.shelf(STORE_KIND)) == 0
