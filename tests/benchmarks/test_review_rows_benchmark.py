"""Printed figures for rendering a record's rows (not run by default: `make benchmark`), each against its baseline
in the same process: `project` over every record of a generated lake; the ASCII fold of texts past ASCII against
`str.translate` (the fold's previous definition); an incremental build's take-over of every record with the
words its file record keeps against the same take-over deriving them again; and reading that file record.
Nothing here asserts a time; the figures go to docs/review-search.md ("Incremental builds").
REVIEW_BENCHMARK_RECORDS sets the lake's size (default 100,000).
"""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evidence.lake_listing import scan_records
from evidence.lake_read import read_entry
from evidence.lake_runs import last_seen, read_manifests
from projection.review_build import build_review_store
from projection.review_reuse import recorded_files, take_over, unchanged
from projection.review_rows import project
from projection.review_store import publish_path
from tests.benchmarks.test_review_search_benchmark import RECORDS, generated_project
from tests.support.installation import Installation
from theurian.installation import build_stamp_secret
from theurian.project import REVIEW_DIR
from theurian.text import ASCII_LOWER, ASCII_UPPER, ascii_fold

_RUNS = 3
_TRANSLATE = str.maketrans(ASCII_UPPER, ASCII_LOWER)


def _best(action: Callable[[], object]) -> float:
    """The fastest of _RUNS runs, in seconds, the collector paused as a build pauses it."""
    samples = []
    for _ in range(_RUNS):
        gc.collect()
        gc.disable()
        try:
            started = time.perf_counter()
            action()
            samples.append(time.perf_counter() - started)
        finally:
            gc.enable()
    return min(samples)


@pytest.mark.benchmark
def test_review_rows_rendering_figures(tmp_path: Path, installation: Installation) -> None:
    root, _ = generated_project(tmp_path)
    build_review_store(root, full=True)  # the store and file record the take-over reads
    lake = root / REVIEW_DIR
    seen = last_seen(read_manifests(root).manifests)
    entries, _ = scan_records(root, identities=True)
    found = [read_entry(lake, entry) for entry in entries]
    read = [(item.record_path, item.record, seen.get(item.record_path), item.content_sha256) for item in found
            if item.record is not None and item.content_sha256 is not None]
    projected = _best(lambda: [project(path, record, last, sha) for path, record, last, sha in read])
    print(f"\nrendering the rows of {len(read)} records (best of {_RUNS})")
    print(f"  project over every record {projected:6.3f} s ({projected / len(read) * 1e6:.1f} us a record)")

    # The generated texts are ASCII; real review text often is not (a typographic apostrophe, an emoji).
    texts = [text + " \u2019" for item in found if item.record is not None for text in _texts_of(item.record)]
    folded = _best(lambda: [ascii_fold(text) for text in texts])
    translated = _best(lambda: [text.translate(_TRANSLATE) for text in texts])
    assert [ascii_fold(text) for text in texts] == [text.translate(_TRANSLATE) for text in texts]
    print(f"  fold of {len(texts)} texts past ASCII {folded:6.3f} s;  str.translate {translated:6.3f} s;  "
          f"{translated / folded:5.1f} x faster")

    target = publish_path(root)
    secret = build_stamp_secret()
    reading = _best(lambda: recorded_files(target, secret))
    recorded = recorded_files(target, secret)
    assert recorded is not None
    same, _ = unchanged(entries, recorded)
    with_words = _best(lambda: take_over(root, recorded, same, seen))
    forgetting = dataclasses.replace(recorded, words={})
    derived = _best(lambda: take_over(root, forgetting, same, seen))
    kept, again = take_over(root, recorded, same, seen), take_over(root, forgetting, same, seen)
    assert kept is not None and again is not None and len(kept) == len(same)
    assert [sorted(row.words.split("\x00")) for row in kept] == [sorted(row.words.split("\x00")) for row in again]
    print(f"  take-over of {len(same)} records: with the recorded words {with_words:6.3f} s;  deriving them "
          f"{derived:6.3f} s;  {with_words / derived:4.2f} x;  reading the file record {reading:6.3f} s")
    print(f"  (lake of {RECORDS} generated records)")


def _texts_of(record: dict[str, Any]) -> list[str]:
    if record["kind"] == "review-thread":
        return [str(comment["body"]) for comment in record["comments"]]
    return [str(record[name]) for name in ("title", "body") if name in record]
