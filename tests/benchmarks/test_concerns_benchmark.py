"""Printed figures for the recurring-concern clustering (not run by default: `make benchmark`; the figures go to
docs/review-concerns.md). Nothing here asserts a quality figure or a time.

Quality: the labelled set (fixtures/concerns) built into a real store by the real build at each threshold of a grid;
purity, recall and the distractors that joined, on the tuning half and on the held-out half side by side. The
threshold is chosen on the tuning half only, and the constant the build ships is printed beside that choice.

Cost: the concern stage of a real build over a quarter, a half and all of CONCERNS_BENCHMARK_UNITS (default
100,000) embedded review threads (the lake grown between builds), timed by a spy that calls the real stage, against
the whole build in the same process; per 100,000 threads, and how the stage grew each time the lake doubled; then
the unchanged lake rebuilt, incrementally and with --full, where the clustering is taken over (concern_reuse).
"""

from __future__ import annotations

import math
import os
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from threadpoolctl import threadpool_limits

import projection.concern_clusters as concern_clusters
import projection.concern_screen as concern_screen
import projection.review_build as review_build
import projection.review_concerns as review_concerns
from evidence.records import canonical_bytes, record_file_name, repository_folder
from projection.review_build import build_review_store
from projection.review_store import open_store
from tests.projection.review_records import new_project, thread, write_lake
from tests.support.concern_set import labels, lake_records, threads
from theurian.embedding import load_model

UNITS = int(os.environ.get("CONCERNS_BENCHMARK_UNITS", "100000"))
THRESHOLDS = (0.26, 0.28, 0.30, 0.32, 0.34, 0.36, 0.38, 0.40, 0.44)
HALVES = ("tune", "held-out")

pytestmark = pytest.mark.benchmark


def _groups(root: Path) -> list[set[str]]:
    found: dict[str, set[str]] = {}
    rows = open_store(root).cursor().execute(
        "SELECT m.concern_id, r.record_key FROM s.concern_members m JOIN s.records r USING (ordinal)").fetchall()
    for concern, key in rows:
        found.setdefault(str(concern), set()).add(str(key))
    return list(found.values())


def scores(groups: list[set[str]], half: str) -> dict[str, float]:
    """purity: of the half's threads in concerns, the share in their concern's majority label (a distractor or a
    one-off is never a majority); recall: per labelled concern of the half, the largest share of its threads found
    together in one concern, averaged; found: labelled concerns with at least MIN_MEMBERS threads together;
    joined: the half's distractors and one-offs in any concern."""
    named = labels()
    in_half = [{key for key in group if named[key][1] == half} for group in groups]
    members = sum(len(group) for group in in_half)
    majority = 0
    for group in in_half:
        counts = [sum(1 for key in group if named[key][0] == name) for name in {named[k][0] for k in group} - {None}]
        majority += max(counts, default=0)
    concerns = sorted({name for name, h, _ in named.values() if name is not None and h == half})
    best = []
    for name in concerns:
        wanted = {key for key, (label, _, _) in named.items() if label == name}
        best.append(max((len(group & wanted) for group in groups), default=0) / len(wanted))
    found = sum(1 for name, share in zip(concerns, best, strict=True)
                if share * sum(1 for label, _, _ in named.values() if label == name) >= review_concerns.MIN_MEMBERS)
    joined = sum(1 for group in in_half for key in group if named[key][0] is None)
    return {"purity": majority / members if members else 1.0, "recall": statistics.mean(best),
            "found": found, "concerns": len(concerns), "joined": joined}


def _line(half: str, figures: dict[str, float]) -> str:
    return (f"{half:<8} purity {figures['purity']:.2f}  recall {figures['recall']:.2f}  labelled concerns found "
            f"{figures['found']:.0f}/{figures['concerns']:.0f}  distractors or one-offs joined {figures['joined']:.0f}")


def test_concern_quality_on_both_halves_and_the_threshold_chosen_on_the_tuning_half(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, lake_records())
    counts = {role: sum(1 for item in threads() if item["role"] == role) for role in ("member", "distractor",
                                                                                     "one-off")}
    print(f"\nlabelled set: {len(threads())} threads ({counts}); shipped: similarity "
          f"{review_concerns.CONCERN_SIMILARITY}, min members {review_concerns.MIN_MEMBERS}, min pull requests "
          f"{review_concerns.MIN_PULL_REQUESTS}")
    best: tuple[float, float] | None = None
    for threshold in THRESHOLDS:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(review_concerns, "CONCERN_SIMILARITY", threshold)
            build_review_store(root)
        groups = _groups(root)
        tune, held = scores(groups, "tune"), scores(groups, "held-out")
        # A distractor joining costs more than a concern missed: the clusters are drafted as knowledge.
        objective = tune["purity"] + tune["recall"] - tune["joined"]
        if best is None or objective > best[0]:
            best = (objective, threshold)
        print(f"  threshold {threshold:.2f}: {len(groups)} concerns | {_line('tune', tune)} | held-out purity "
              f"{held['purity']:.2f} recall {held['recall']:.2f}")
    assert best is not None
    print(f"chosen on the tuning half: {best[1]}; shipped: {review_concerns.CONCERN_SIMILARITY}")
    build_review_store(root)
    groups = _groups(root)
    for half in HALVES:
        print("  shipped " + _line(half, scores(groups, half)))


def _synthetic(index: int, rng: random.Random, templates: list[str], vocabulary: list[str]) -> dict[str, Any]:
    """A review thread: one in ten rewords a labelled thread (a recurrence), the rest are unrelated remarks."""
    if index % 10 == 0:
        words = rng.choice(templates).split()
        for _ in range(len(words) // 4):
            words[rng.randrange(len(words))] = rng.choice(vocabulary)
        text = " ".join(words)
    else:
        text = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(10, 40)))
    return thread(f"Bench/Repo-{index % 5}", index // 3 + 1, f"PRRT_c{index}", bodies=(text,),
                  path=f"src/module_{index % 300}.py", state=("open", "resolved")[index % 2])


def test_the_concern_stage_s_cost_per_100000_threads_at_three_sizes(tmp_path: Path) -> None:
    rng = random.Random(19)
    templates = ["\n".join(item["comments"]) for item in threads()]
    vocabulary = sorted({w for text in templates for w in text.split()} | {f"word{n}" for n in range(5000)})
    root = new_project(tmp_path / "p")
    spent: list[float] = []
    real: Callable[..., int] = review_concerns.build_concerns

    def timed(*args: Any) -> int:
        started = time.perf_counter()
        try:
            return real(*args)
        finally:
            spent.append(time.perf_counter() - started)

    written = 0
    previous: float | None = None
    print()
    for size in (UNITS // 4, UNITS // 2, UNITS):
        # The lake grows and is built again: the incremental build reuses the vectors, the concern stage reclusters.
        for index in range(written, size):
            record = _synthetic(index, rng, templates, vocabulary)
            folder = root / ".theurian/review" / repository_folder(str(record["repository"])) / "review-thread"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / record_file_name(str(record["recordKey"]))).write_bytes(canonical_bytes(record))
        written = size
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(review_build, "build_concerns", timed)
            started = time.perf_counter()
            summary = build_review_store(root)
            total = time.perf_counter() - started
        stage = spent[-1]
        growth = "" if previous is None else f"; x{stage / previous:.2f} the stage at half the size"
        print(f"build of {size} threads: {total:.1f} s, of which the concern stage {stage:.2f} s "
              f"({stage / total:.0%}); "
              f"{summary.concerns} concerns; per 100,000 threads: concern stage {stage / size * 100_000:.2f} s"
              f"{growth} (n log n doubling: x{2 * math.log(size) / math.log(size // 2):.2f}; n squared: x4)")
        previous = stage
    # The same lake again, as an operator rebuilds it: the clustering's input is unchanged, so it is taken over.
    for full in (False, True):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(review_build, "build_concerns", timed)
            started = time.perf_counter()
            summary = build_review_store(root, full=full)
            total = time.perf_counter() - started
        print(f"{'full ' if full else ''}rebuild of the unchanged {UNITS} threads: {total:.1f} s, of which the concern "
              f"stage {spent[-1]:.2f} s ({spent[-1] / total:.0%}; clustering taken over: {summary.clustering_reused}, "
              f"against {previous:.2f} s clustering the same lake above); {summary.concerns} concerns")


def _all_pairs_edges(exact: Any, floor: int) -> Any:
    """The screen the forest replaced, over the same exact integers: every unit against every other, each keeping
    its MAX_NEIGHBOURS best (cosine, then smaller position)."""
    import numpy

    scale = concern_screen.ppb_scale(exact.shape[1])
    found = []
    for start in range(0, len(exact), 1024):
        cosines = numpy.rint(exact[start:start + 1024] @ exact.T * scale).astype(numpy.int64)
        cosines[numpy.arange(len(cosines)), numpy.arange(start, start + len(cosines))] = -(1 << 30)
        keys = ((cosines + (1 << 30)) << 32) | ((1 << 32) - 1 - numpy.arange(len(exact)))
        keys[cosines < floor] = -1
        best = numpy.partition(keys, -concern_screen.MAX_NEIGHBOURS, axis=1)[:, -concern_screen.MAX_NEIGHBOURS:]
        rows, slots = numpy.nonzero(best >= 0)
        picked = best[rows, slots]
        found.append((rows + start, (1 << 32) - 1 - (picked & ((1 << 32) - 1)), (picked >> 32) - (1 << 30)))
    return tuple(numpy.concatenate([part[at] for part in found]) for at in range(3))


def test_how_much_of_the_all_pairs_screen_the_forest_keeps() -> None:
    import numpy

    units = int(os.environ.get("CONCERNS_SCREEN_UNITS", "20000"))
    rng = random.Random(19)
    templates = ["\n".join(item["comments"]) for item in threads()]
    vocabulary = sorted({w for text in templates for w in text.split()} | {f"word{n}" for n in range(5000)})
    texts = [str(_synthetic(index, rng, templates, vocabulary)["comments"][0]["body"]) for index in range(units)]
    matrix = load_model().embed(texts).astype(numpy.float32)
    exact, floor = concern_screen.quantised(matrix), concern_clusters.floor_of(review_concerns.CONCERN_SIMILARITY)
    timings, edges, clusters = {}, {}, {}
    for name, screen in (("forest", concern_screen.neighbour_edges), ("all pairs", _all_pairs_edges)):
        with pytest.MonkeyPatch.context() as patch, threadpool_limits(limits=1, user_api="blas"):
            started = time.perf_counter()
            edges[name] = screened = screen(exact, floor)
            timings[name] = time.perf_counter() - started
            patch.setattr(concern_clusters, "neighbour_edges", lambda *_, kept=screened: kept)  # cluster those
            found = concern_clusters.cluster(matrix, review_concerns.CONCERN_SIMILARITY)
            clusters[name] = {tuple(group) for group in found if len(group) >= review_concerns.MIN_MEMBERS}
    pairs = {name: set(zip(found[0].tolist(), found[1].tolist(), strict=True)) for name, found in edges.items()}
    print(f"\nscreen of {units} units ({concern_screen.SCREEN_TREES} trees, leaves of {concern_screen.LEAF_UNITS}): "
          f"forest {timings['forest']:.2f} s, all pairs {timings['all pairs']:.2f} s; the forest keeps "
          f"{len(pairs['forest'] & pairs['all pairs']) / max(1, len(pairs['all pairs'])):.3f} of the all-pairs "
          f"screen's {len(pairs['all pairs'])} edges and {len(clusters['forest'] & clusters['all pairs'])} of its "
          f"{len(clusters['all pairs'])} clusters of {review_concerns.MIN_MEMBERS} or more identically "
          f"(the forest forms {len(clusters['forest'])})")
