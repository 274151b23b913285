"""knowledge.search quality on the labelled set in fixtures/knowledge-retrieval: recall@5 and MRR for lexical only
(today's ranking: lexical + title, k = 60), each new channel alone, and fused (the shipped Tuning, through the
real tool), on both halves; the grid search that chose the shipped Tuning runs on the tuning half only and prints
its best point beside the shipped one.

Run with `make benchmark` (or `pytest -m benchmark -s tests/benchmarks/test_knowledge_retrieval_benchmark.py`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from knowledge.apply import apply_migrations
from knowledge.fusion import TUNED, Tuning, fuse
from knowledge.hybrid import Proposal, propose
from knowledge.index import build_index, open_index
from knowledge.index_pointer import read_index_pointer
from knowledge.retrieval import CANDIDATE_DEPTH
from serve.tooling import Call, ServeSettings
from serve.tools.knowledge import knowledge_search
from tests.knowledge.authoring import REPO, MigrationWriter
from theurian.project import Project

SET = REPO / "fixtures" / "knowledge-retrieval"
CUTOFF = 5
TODAY = Tuning(weights={"lexical": 1.0, "title": 1.0, "trigram": 0.0, "dense": 0.0, "summary": 0.0}, rrf_k=60)
GRID_WEIGHTS = {"lexical": (0.0, 0.5, 1.0), "title": (0.0, 0.5), "trigram": (0.0, 0.5, 1.0), "dense": (1.0, 2.0, 4.0),
                "summary": (0.0, 0.5, 1.0)}
GRID_K = (5, 15, 30, 60)
GRID_FLOORS = (0.25, 0.20, 0.15, 0.10)  # on a tie the higher floor wins: fewer weak dense candidates

pytestmark = pytest.mark.benchmark

Ranker = Callable[[dict[str, Any], Proposal], list[str]]


def _project(root: Path) -> Path:
    writer = MigrationWriter(root, created_at="2026-08-01T00:00:00Z")
    for item in json.loads((SET / "items.json").read_text(encoding="utf-8")):
        writer.item(item["itemId"], item["body"], title=item["title"], kind=item["kind"])
    writer.write("labelled-set")
    apply_migrations(root)
    build_index(root, "internal", raptor=True)
    return root


def _figures(queries: Sequence[dict[str, Any]], ranked: Sequence[list[str]]) -> tuple[float, float]:
    """Mean recall@5 and mean reciprocal rank over the queries that have relevant items."""
    recall = reciprocal = 0.0
    scored = 0
    for query, ids in zip(queries, ranked, strict=True):
        relevant = set(query["relevant"])
        if not relevant:
            continue
        scored += 1
        recall += len(relevant & set(ids[:CUTOFF])) / len(relevant)
        reciprocal += next((1 / rank for rank, i in enumerate(ids, start=1) if i in relevant), 0.0)
    return recall / scored, reciprocal / scored


def _proposals(root: Path, queries: Sequence[dict[str, Any]], tuning: Tuning) -> list[Proposal]:
    pointer = read_index_pointer(root)
    assert pointer is not None
    index = open_index(root, pointer)
    assert index is not None
    with contextlib.closing(index):
        return [propose(index, pointer, q["query"], CANDIDATE_DEPTH, tuning) for q in queries]


def _grid(root: Path, tuning_half: list[dict[str, Any]]) -> tuple[tuple[float, float], Tuning]:
    """The best Tuning on the tuning half by recall@5 + MRR (the first in grid order on a tie)."""
    best: tuple[float, tuple[float, float], Tuning] | None = None
    for floor in GRID_FLOORS:
        proposals = _proposals(root, tuning_half, Tuning(dense_floor=floor, summary_floor=floor))
        for k, values in itertools.product(GRID_K, itertools.product(*GRID_WEIGHTS.values())):
            tuning = Tuning(weights=dict(zip(GRID_WEIGHTS, values, strict=True)), rrf_k=k, dense_floor=floor,
                            summary_floor=floor)
            ranked = [[f.item_id for f in fuse(p.channels, p.offered, tuning)] for p in proposals]
            figures = _figures(tuning_half, ranked)
            if best is None or sum(figures) > best[0]:
                best = (sum(figures), figures, tuning)
    assert best is not None
    return best[1], best[2]


def _fused_through_the_tool(root: Path, queries: Sequence[dict[str, Any]]) -> list[list[str]]:
    call = Call(ServeSettings("internal"), Project("bench", root))
    answers = [knowledge_search(call, query=q["query"], limit=10) for q in queries]
    assert all(a["retrieval"]["channels"] == ["lexical", "title", "trigram", "dense", "summary"] for a in answers)
    return [[hit["itemId"] for hit in a["results"]] for a in answers]


def test_knowledge_search_quality_on_the_labelled_set(tmp_path: Path) -> None:
    root = _project(tmp_path / "labelled")
    queries = json.loads((SET / "queries.json").read_text(encoding="utf-8"))["queries"]
    halves = {half: [q for q in queries if q["half"] == half] for half in ("tuning", "held-out")}
    assert len(queries) >= 40 and all(halves.values())
    channel_only: dict[str, Ranker] = {
        "lexical only (today)": lambda q, p: [f.item_id for f in fuse(p.channels, ("lexical", "title"), TODAY)],
        "trigram only": lambda q, p: list(p.channels["trigram"]),
        "dense only": lambda q, p: list(p.channels["dense"]),
        "summary only": lambda q, p: list(p.channels["summary"]),
    }
    print(f"\nknowledge.search quality, {len(queries)} labelled situations (recall@{CUTOFF} / MRR)")
    for half, subset in halves.items():
        proposals = _proposals(root, subset, TUNED)
        print(f"  {half} half ({sum(1 for q in subset if q['relevant'])} with matches, "
              f"{sum(1 for q in subset if not q['relevant'])} without):")
        for name, ranker in channel_only.items():
            recall, mrr = _figures(subset, [ranker(q, p) for q, p in zip(subset, proposals, strict=True)])
            print(f"    {name:24s} {recall:5.2f} / {mrr:5.2f}")
        fused = _fused_through_the_tool(root, subset)
        recall, mrr = _figures(subset, fused)
        print(f"    {'fused (knowledge.search)':24s} {recall:5.2f} / {mrr:5.2f}")
        empty = sum(1 for q, ids in zip(subset, fused, strict=True) if not q["relevant"] and not ids)
        print(f"    no-match situations answered empty: {empty} of {sum(1 for q in subset if not q['relevant'])}")
    figures, chosen = _grid(root, halves["tuning"])
    print(f"  grid best on the tuning half: {figures[0]:.2f} / {figures[1]:.2f} with {chosen}")
    print(f"  shipped: {TUNED}")
