"""The take-over's rendering: a record taken over from the store a build replaces gets, from its stored columns and
texts, exactly the rows `project` renders from its file (`projection.review_reuse.take_over`, through `assemble`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from evidence.lake_listing import LakeEntry, scan_records
from evidence.lake_read import read_entry
from evidence.lake_runs import LastSeen
from projection.review_build import build_review_store
from projection.review_reuse import RecordedFiles, recorded_files, take_over, unchanged
from projection.review_rows import Projected, project
from projection.review_store import publish_path
from projection.review_vectors import previous_store
from tests.projection.review_records import new_project, pull_request, review, settle, thread, write_lake
from theurian.embedding import load_model
from theurian.installation import build_stamp_secret
from theurian.project import REVIEW_DIR
from theurian.stamped_store import VerifiedStores

# Empty texts first (the lead is a later position), a NUL, every kind of whitespace, quotes and backslashes JSON
# escapes, control characters, letters past ASCII and past the BMP.
BODIES = ("", "Ünïcode ’quotes’ and \x00NUL\x00inside", 'a "quoted" \\ back\\slash / slash', "\x01\x1f\x7f ctl",
          "tab\tline\nbreak\x1cfile\u2028sep\u3000wide", "  LEADING and trailing  ", "\U0001f600 emoji \u212aelvin")


def _records() -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for n in range(1, 15):
        repository = ("Acme/Alpha", "Acme/Beta")[n % 2]
        records.append(pull_request(repository, n, f"PR_{n}", title=BODIES[n % 7], body=BODIES[(n + 3) % 7]))
        records.append(review(repository, n, f"PRR_{n}", body=BODIES[n % 7]))
        records.append(thread(repository, n, f"PRRT_{n}", bodies=BODIES[n % 7:] + BODIES[:n % 3],
                              path=f"src/{BODIES[n % 7][:3]}.py", state=("open", "resolved")[n % 2]))
    records.append(thread("Acme/Alpha", 2, "PRRT_silent", bodies=()))  # a thread holding no text at all
    records.append(thread("Acme/Alpha", 3, "PRRT_blank", bodies=("", "")))  # texts, every one empty
    return records


def _built(tmp_path: Path) -> tuple[Path, RecordedFiles, list[LakeEntry]]:
    """A project of `_records()` built once: its root, the file record its build wrote, and every entry (each
    unchanged since)."""
    root = new_project(tmp_path / "p")
    write_lake(root, _records())
    settle(root)
    build_review_store(root)
    entries, _ = scan_records(root, identities=True)
    recorded = recorded_files(publish_path(root), build_stamp_secret())
    assert recorded is not None
    same, changed = unchanged(entries, recorded)
    assert (len(same), changed) == (len(_records()), [])
    return root, recorded, same


def _without_facts(row: Projected) -> tuple[Any, ...]:
    # The words are one string of a set's members: compared as the set, the one thing they mean.
    return (*row[:3], sorted(row.words.split("\x00")), *row[4:6])


def test_each_record_taken_over_is_rendered_byte_for_byte_as_project_renders_it_from_its_file(
        tmp_path: Path) -> None:
    root, recorded, same = _built(tmp_path)
    # Last-seen runs are the current manifests', not the old store's: one record seen, the others not.
    seen = {same[4].relative: LastSeen("run-\u00e9 \"7\"", "2026-01-02T03:04:05Z")}
    found = [read_entry(root / REVIEW_DIR, entry) for entry in same]
    from_files = {item.record_path: project(item.record_path, item.record, seen.get(item.record_path),
                                            str(item.content_sha256)) for item in found if item.record is not None}
    taken = take_over(root, recorded, same, seen)
    assert taken is not None and len(taken) == len(from_files)
    assert all(row.facts is None for row in taken)
    assert [_without_facts(row) for row in taken] == [_without_facts(from_files[row.sort_key[3]]) for row in taken]
    # Without its recorded words a record is rendered by `assemble` itself, which derives them: the same rows.
    deriving = take_over(root, dataclasses.replace(recorded, words={}), same, seen)
    assert deriving is not None
    assert [_without_facts(row) for row in deriving] == [_without_facts(row) for row in taken]


def test_a_take_over_through_the_store_previous_store_opened_renders_what_its_own_opening_renders(
        tmp_path: Path) -> None:
    root, recorded, same = _built(tmp_path)
    shared = VerifiedStores()
    previous = previous_store(root, load_model().identity, shared)
    assert len(shared.shelf("review")) == 1 and previous.vectors
    through_shared = take_over(root, recorded, same, {}, shared)
    assert through_shared is not None and len(through_shared) == len(same)
    assert through_shared == take_over(root, recorded, same, {})
    assert len(shared.shelf("review")) == 1  # the one store both read
