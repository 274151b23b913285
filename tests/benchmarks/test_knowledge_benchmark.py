"""Knowledge at 10,000 items: apply time, index build time, knowledge.search p50/p95 on both paths.

Run with `make benchmark` (or `pytest -m benchmark -s tests/benchmarks`); prints its figures.
"""

from __future__ import annotations

import hashlib
import statistics
import time
from pathlib import Path

import pytest
import yaml

from knowledge.apply import apply_migrations
from knowledge.index import build_index
from serve.tooling import Call, ServeSettings
from serve.tools.knowledge import knowledge_search
from theurian.project import Project

ITEMS = 10_000
QUERIES = ("retry backoff", "cache invalidation", "token", "deadlock in the scheduler", "widget 4242", "zzzz")
ROUNDS = 20
WORDS = ("retry", "backoff", "cache", "invalidation", "token", "scheduler", "deadlock", "queue", "gateway",
         "schema", "migration", "lint", "widget", "timeout", "replica", "shard", "audit", "policy")

pytestmark = pytest.mark.benchmark


def _author(root: Path) -> None:
    bodies = root / ".theurian/knowledge/bench"
    bodies.mkdir(parents=True)
    operations = []
    for n in range(ITEMS):
        words = " ".join(WORDS[(n * 7 + k) % len(WORDS)] for k in range(60))
        body = f"# Rule {n}\n\nWidget {n}: {words}.\n"
        (bodies / f"{n}.md").write_text(body, encoding="utf-8")
        item = f"convention.rule-{n}"
        operations.append({"op": "createItem", "itemId": item, "kind": "convention", "namespace": "bench",
                           "owner": "bench"})
        operations.append({
            "op": "upsertRevision", "itemId": item, "revisionId": f"01K5{n:022d}",
            "contentFile": f"../knowledge/bench/{n}.md",
            "contentSha256": "sha256:" + hashlib.sha256(body.encode()).hexdigest(),
            "metadata": {"title": f"Rule {n} {WORDS[n % len(WORDS)]}", "contentType": "text/markdown",
                         "kind": "convention", "namespace": "bench", "status": "approved", "owner": "bench",
                         "trustLevel": "reviewed", "sensitivity": ("public", "internal", "confidential")[n % 3],
                         "sourceAnchors": [{"provider": "git", "sourceUri": f"git://bench/{n}.md"}]}})
    migrations = root / ".theurian/migrations"
    migrations.mkdir(parents=True)
    document = {"apiVersion": "theurian.dev/v1", "id": "01K5AAAAAAAAAAAAAAAAAAAAAA",
                "createdAt": "2026-08-01T00:00:00Z", "author": "bench", "dependsOn": [],
                "description": "10,000 items", "operations": operations}
    (migrations / "01K5AAAAAAAAAAAAAAAAAAAAAA-bench.yaml").write_text(
        yaml.dump(document, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")


def _percentiles(root: Path) -> tuple[float, float]:
    call = Call(ServeSettings("internal"), Project("bench", root))
    samples = []
    for _ in range(ROUNDS):
        for query in QUERIES:
            started = time.perf_counter()
            knowledge_search(call, query=query, limit=10)
            samples.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(samples, n=20)
    return statistics.median(samples), cuts[18]


def test_knowledge_at_ten_thousand_items(tmp_path: Path) -> None:
    root = tmp_path / "bench"
    _author(root)
    started = time.perf_counter()
    outcome = apply_migrations(root)
    apply_seconds = time.perf_counter() - started
    started = time.perf_counter()
    build_index(root, "internal")
    index_seconds = time.perf_counter() - started
    ranked = _percentiles(root)
    (root / ".theurian/state/knowledge-index.json").unlink()
    fallback = _percentiles(root)
    assert outcome.pointer.migration_count == 1
    print(f"\nknowledge benchmark, {ITEMS} items (2 operations each, one migration file)")
    print(f"  migrate apply:        {apply_seconds:6.2f} s")
    print(f"  index build:          {index_seconds:6.2f} s")
    print(f"  search ranked:        p50 {ranked[0]:6.1f} ms   p95 {ranked[1]:6.1f} ms")
    print(f"  search fallback:      p50 {fallback[0]:6.1f} ms   p95 {fallback[1]:6.1f} ms")
