"""Printed figures for review.findSimilar (not run by default: `make benchmark`; the figures go to
docs/review-similar.md). Nothing here asserts a quality figure or a time.

Quality: the labelled set (fixtures/similar) built into a real store; recall@5 and MRR for lexical only (BM25, the
untuned reference), dense only (the model's cosine over every unit) and fused (the served answer, floor and all), on
the tuning half and on the held-out half side by side; the floor and the lexical weight are chosen on the tuning
half only, and the constants the code ships are printed beside that choice.

Speed: findSimilar p95 in-process over a real store of FIND_SIMILAR_BENCHMARK_UNITS (default 100,000) embedded
units; the dense scan at 1,000,000 units (synthetic unit vectors: a store that size is not built here); the build's
embedding overhead and the rebuild after 1 % of the records changed.
"""

from __future__ import annotations

import math
import os
import random
import re
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy
import pytest

import projection.review_similar as similar
from evidence.records import canonical_bytes, record_file_name, repository_folder
from projection.review_build import build_review_store
from projection.review_similar import SimilarFilter, SimilarIndex, find_similar, similar_index
from serve.tools.review_similar import answer_similar
from tests.projection.review_records import new_project, thread, write_lake
from tests.support.similar_set import Situation, lake_records, situations, threads
from theurian.embedding import bundled_model_files, load_model
from theurian.stamped_store import VerifiedStores

UNITS = int(os.environ.get("FIND_SIMILAR_BENCHMARK_UNITS", "100000"))
BIG_UNITS = 1_000_000
HALVES = ("tune", "held-out")
FLOORS = (0.0, 0.20, 0.22, 0.24, 0.26, 0.28, 0.30, 0.32)
WEIGHTS = (0.0, 0.05, 0.10, 0.15, 0.20, 0.30)

pytestmark = pytest.mark.benchmark


def _recall_and_rank(ranked: Sequence[str], relevant: frozenset[str]) -> tuple[float, float]:
    hits = len(set(ranked[:5]) & relevant) / min(5, len(relevant))
    rank = next((index for index, key in enumerate(ranked) if key in relevant), None)
    return hits, 0.0 if rank is None else 1 / (rank + 1)


def _scores(rankings: dict[str, list[str]], cases: list[Situation]) -> tuple[float, float, int, int]:
    """(recall@5, MRR) over the cases with relevant threads; (no-match cases answered empty, no-match cases)."""
    pairs = [_recall_and_rank(rankings[case.id], case.relevant) for case in cases if case.relevant]
    empty = sum(1 for case in cases if not case.relevant and not rankings[case.id])
    return (statistics.mean(p[0] for p in pairs), statistics.mean(p[1] for p in pairs), empty,
            sum(1 for case in cases if not case.relevant))


_WORD = re.compile(r"[a-z0-9]+")


def _bm25(documents: dict[str, str], query: str, k1: float = 1.2, b: float = 0.75) -> list[str]:
    """Keys by BM25 over content words (the stop words findSimilar drops), best first; ties by key."""
    words = {key: [w for w in _WORD.findall(text.lower()) if w not in similar.STOP_WORDS]
             for key, text in documents.items()}
    average = statistics.mean(len(w) for w in words.values())
    frequency: dict[str, int] = {}
    for listed in words.values():
        for word in set(listed):
            frequency[word] = frequency.get(word, 0) + 1
    scores = {}
    for key, listed in words.items():
        score = 0.0
        for word in set(_WORD.findall(query.lower())) - similar.STOP_WORDS:
            count = listed.count(word)
            if count:
                idf = math.log(1 + (len(words) - frequency[word] + 0.5) / (frequency[word] + 0.5))
                score += idf * count * (k1 + 1) / (count + k1 * (1 - b + b * len(listed) / average))
        scores[key] = score
    return [key for key, score in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0])) if score > 0]


def test_find_similar_quality_lexical_dense_and_fused_on_both_halves(tmp_path: Path) -> None:
    root = new_project(tmp_path / "p")
    write_lake(root, lake_records())
    build_review_store(root)
    store, index = similar_index(root)
    keys = dict(store.cursor().execute("SELECT ordinal, record_key FROM s.records").fetchall())
    documents = {f"PRRT_similar_{item['id']}": "\n".join(item["comments"]) for item in threads()}
    cases = situations()
    model = load_model()

    def served() -> dict[str, list[str]]:
        return {case.id: [hit.record.record_key for hit in find_similar(root, case.text, SimilarFilter(), 20).hits]
                for case in cases}

    lexical = {case.id: _bm25(documents, case.text) for case in cases}
    dense = {case.id: [keys[ordinal] for ordinal, _ in index.nearest(model.embed([case.text])[0], SimilarFilter(),
                                                                     len(index))] for case in cases}
    tune = [case for case in cases if case.half == "tune"]
    best: tuple[float, float, float] | None = None
    for floor in FLOORS:
        for weight in WEIGHTS:
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(similar, "SIMILARITY_FLOOR", floor)
                patch.setattr(similar, "LEXICAL_WEIGHT", weight)
                recall, mrr, empty, none = _scores(served(), tune)
            objective = recall + mrr + empty / none
            if best is None or objective > best[0]:
                best = (objective, floor, weight)
    fused = served()
    assert best is not None
    print(f"\nlabelled set: {len(threads())} threads, {len(cases)} situations "
          f"({sum(1 for c in cases if not c.relevant)} with no matching thread); model {model.identity.name}")
    shared = [len(similar.content_words(case.text) & similar.content_words(documents[key]))
              for case in cases for key in case.relevant]
    print(f"hardness: a situation shares {statistics.mean(shared):.2f} content words with a relevant thread on "
          f"average; {shared.count(0)} of {len(shared)} (situation, relevant thread) pairs share none")
    print(f"chosen on the tuning half: floor {best[1]}, lexical weight {best[2]}; shipped: floor "
          f"{similar.SIMILARITY_FLOOR}, lexical weight {similar.LEXICAL_WEIGHT}")
    for half in HALVES:
        chosen = [case for case in cases if case.half == half]
        for name, rankings in (("lexical only (BM25)", lexical), ("dense only", dense), ("fused (served)", fused)):
            recall, mrr, empty, none = _scores(rankings, chosen)
            answered = f"; no-match answered empty {empty}/{none}" if name.startswith("fused") else ""
            print(f"  {half:<8} {name:<20} recall@5 {recall:.2f}  MRR {mrr:.2f}{answered}")
        lost = sum(1 for case in chosen if case.relevant and not fused[case.id])
        print(f"  {half:<8} situations with a match answered empty by the floor: {lost}")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(similar, "SIMILARITY_FLOOR", best[1])
        patch.setattr(similar, "LEXICAL_WEIGHT", best[2])
        tuned = served()
    for half in HALVES:
        recall, mrr, empty, none = _scores(tuned, [case for case in cases if case.half == half])
        print(f"  {half:<8} fused with the tuning half's choice: recall@5 {recall:.2f}  MRR {mrr:.2f}; "
              f"no-match answered empty {empty}/{none}")


def _text(rng: random.Random, vocabulary: list[str]) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(12, 60)))


def _unit(index: int, text: str) -> dict[str, object]:
    return thread(f"Bench/Repo-{index % 5}", index // 4 + 1, f"PRRT_s{index}", bodies=(text,),
                  path=f"src/module_{index % 300}.py", state=("open", "resolved")[index % 2])


def _write(root: Path, record: dict[str, object]) -> Path:
    folder = root / ".theurian/review" / repository_folder(str(record["repository"])) / str(record["kind"])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / record_file_name(str(record["recordKey"]))
    path.write_bytes(canonical_bytes(record))
    return path


def _generate(root: Path, count: int, rng: random.Random, vocabulary: list[str]) -> None:
    for index in range(count):
        _write(root, _unit(index, _text(rng, vocabulary)))


def _p95(run: Callable[[str], object], queries: list[str], rounds: int = 3) -> tuple[float, float, float]:
    """(median, p95) wall milliseconds a call, and the p95 of the CPU milliseconds a call (what the machine's load
    does not inflate)."""
    for query in queries[:3]:
        run(query)  # warm: the index loads on the first call
    timings, cpu = [], []
    for _ in range(rounds):
        for query in queries:
            started, started_cpu = time.perf_counter(), time.process_time()
            run(query)
            timings.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
    timings.sort()
    cpu.sort()
    return statistics.median(timings), timings[int(len(timings) * 0.95) - 1], cpu[int(len(cpu) * 0.95) - 1]


def _load() -> str:
    return "load average " + " / ".join(f"{value:.1f}" for value in os.getloadavg())


def _float32_scan(index: SimilarIndex, query: numpy.typing.NDArray[numpy.float32]) -> list[int]:
    """The baseline the served scan is measured against (what it replaced): one float32 matrix-vector product over
    every row (numpy's BLAS), then the top CANDIDATES."""
    scores = index.matrix @ query
    picked = numpy.argpartition(-scores, similar.CANDIDATES)[:similar.CANDIDATES]
    return [int(at) for at in picked[numpy.lexsort((picked, -scores[picked]))]]


def test_find_similar_speed_and_the_build_s_embedding_cost(tmp_path: Path) -> None:
    rng = random.Random(14)
    vocabulary = sorted({w for item in threads() for c in item["comments"] for w in c.split()})
    root = new_project(tmp_path / "p")
    _generate(root, UNITS, rng, vocabulary)
    started = time.perf_counter()
    first = build_review_store(root)
    build_seconds = time.perf_counter() - started
    model = load_model()
    texts = [_text(rng, vocabulary) for _ in range(UNITS)]
    started = time.perf_counter()
    model.embed(texts)
    embed_seconds = time.perf_counter() - started
    print(f"\nbuild of {UNITS} embedded units: {build_seconds:.1f} s ({first.embedded} embedded); embedding "
          f"{UNITS} texts of the same shape alone: {embed_seconds:.1f} s = {embed_seconds / UNITS * 1e6:.0f} µs a text"
          f" ({embed_seconds / UNITS * 100_000:.1f} s per 100,000)")
    for index in rng.sample(range(UNITS), UNITS // 100):
        _write(root, _unit(index, _text(rng, vocabulary)))
    started = time.perf_counter()
    again = build_review_store(root)
    print(f"rebuild after 1 % changed: {time.perf_counter() - started:.1f} s ({again.embedded} embedded, "
          f"{again.reused} reused)")
    queries = [case.text for case in situations()]
    print(f"measured at {_load()} (two cores)")
    # As the daemon answers: its verify-once cache (the store is verified on the first call, not on every one) and
    # the concern lookup the tool adds to every answer.
    stores = VerifiedStores()
    started = time.perf_counter()
    answer_similar(root, queries[0], SimilarFilter(), 5, stores)
    print(f"first call (verifies the store once for the cache): {time.perf_counter() - started:.2f} s")
    median, p95, cpu = _p95(lambda q: answer_similar(root, q, SimilarFilter(), 5, stores), queries)
    print(f"findSimilar at {UNITS} units (real store): median {median:.1f} ms, p95 {p95:.1f} ms (CPU p95 {cpu:.1f} ms)")
    median, p95, cpu = _p95(lambda q: answer_similar(root, q, SimilarFilter(repository="Bench/Repo-3",
                                                                            thread_state="open"), 5, stores), queries)
    print(f"  with repository + threadState filters: median {median:.1f} ms, p95 {p95:.1f} ms (CPU p95 {cpu:.1f} ms)")
    _, loaded = similar_index(root)
    _print_scans(loaded, model.embed(queries), queries)
    print(f"  {_load()}")


def _print_scans(index: SimilarIndex, vectors: numpy.typing.NDArray[numpy.float32], queries: list[str]) -> None:
    """The served scan beside the float32 scan it replaced, on the same index and queries, and whether they agree."""
    by_query = dict(zip(queries, vectors, strict=True))
    median, p95, cpu = _p95(lambda q: _float32_scan(index, by_query[q]), queries)
    print(f"  float32 scan + top {similar.CANDIDATES} (the baseline): median {median:.1f} ms, p95 {p95:.1f} ms "
          f"(CPU p95 {cpu:.1f} ms)")
    served_median, served_p95, served_cpu = _p95(lambda q: index.nearest(by_query[q], SimilarFilter(),
                                                                          similar.CANDIDATES), queries)
    print(f"  served scan (int8 read, bounded, float32 rescoring): median {served_median:.1f} ms, p95 {served_p95:.1f}"
          f" ms (CPU p95 {served_cpu:.1f} ms); p95 ratio to the baseline {served_p95 / p95:.2f}")
    same = sum(1 for q in queries if [index.ordinals[at] for at in _float32_scan(index, by_query[q])]
               == [ordinal for ordinal, _ in index.nearest(by_query[q], SimilarFilter(), similar.CANDIDATES)])
    rescored = sorted(index.scan.nearest(by_query[q], None, similar.CANDIDATES)[2] for q in queries)
    print(f"  the two agree on {same} of {len(queries)} situations; rows rescored in float32: median "
          f"{rescored[len(rescored) // 2]}, most {rescored[-1]} of {len(index)}")


def test_the_dense_scan_at_a_million_units() -> None:
    rng = numpy.random.default_rng(14)
    matrix = rng.standard_normal((BIG_UNITS, load_model().identity.dimension), dtype=numpy.float32)
    matrix /= numpy.linalg.norm(matrix, axis=1, keepdims=True)
    columns = (["review-thread"] * BIG_UNITS, [f"Bench/Repo-{i % 5}" for i in range(BIG_UNITS)],
               ["open"] * BIG_UNITS, [f"src/module_{i % 300}.py" for i in range(BIG_UNITS)])
    texts = [[("comment", "")]] * BIG_UNITS  # the scan reads no text
    started = time.perf_counter()
    index = SimilarIndex(load_model().identity, "bench", numpy.arange(BIG_UNITS, dtype=numpy.int64), matrix, columns,
                         texts)
    print(f"\nindex of {BIG_UNITS} units (synthetic unit vectors) made in {time.perf_counter() - started:.1f} s; "
          f"{_load()} (two cores)")
    model = load_model()
    queries = [case.text for case in situations()]
    median, p95, cpu = _p95(lambda q: index.nearest(model.embed([q])[0], SimilarFilter(), similar.CANDIDATES),
                            queries)
    print(f"dense scan at {BIG_UNITS} units (embed + scan + top {similar.CANDIDATES}): median {median:.1f} ms, "
          f"p95 {p95:.1f} ms (CPU p95 {cpu:.1f} ms)")
    median, p95, cpu = _p95(lambda q: index.nearest(model.embed([q])[0], SimilarFilter(repository="Bench/Repo-3"),
                                                    similar.CANDIDATES), queries)
    print(f"  with a repository filter: median {median:.1f} ms, p95 {p95:.1f} ms (CPU p95 {cpu:.1f} ms)")
    _print_scans(index, model.embed(queries), queries)
    print(f"  {_load()}")


def _static_parts() -> tuple[numpy.typing.NDArray[numpy.float32], Callable[[str], list[int]]]:
    """The bundled model's token matrix and its tokenizer, read as theurian.embedding reads them."""
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    files = bundled_model_files()
    matrix = load_file(str(files.weights))[files.tensor].astype(numpy.float32)
    tokenizer = Tokenizer.from_file(str(files.tokenizer))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return matrix, lambda text: [t for t in tokenizer.encode(text, add_special_tokens=False).ids if t < len(matrix)]


def test_find_similar_static_model_variants_on_both_halves() -> None:
    """Levers tried on the dense channel (chosen by the tuning half, both halves printed): Matryoshka truncation
    of the model's dimensions, token weighting (Zipf: the tokenizer's ids follow frequency), pseudo-relevance
    feedback on the query, a stemmed BM25 added to the cosine, and the token matrix's mean direction removed from
    every vector (the common component of mean-pooled vectors)."""
    matrix, ids_of = _static_parts()
    documents = {f"PRRT_similar_{item['id']}": "\n".join(item["comments"]) for item in threads()}
    keys = sorted(documents)
    cases = situations()

    Vector = numpy.typing.NDArray[numpy.float32]  # noqa: N806 - a type alias, named as types are

    centre = matrix.mean(axis=0)

    def embed(text: str, dims: int, weight: Vector | None, centred: bool = False) -> Vector:
        ids = ids_of(text)
        rows = matrix[ids, :dims]
        vector: Vector = rows.mean(axis=0) if weight is None else (rows * weight[ids, None]).sum(axis=0) / weight[
            ids].sum()
        if centred:
            vector = vector - centre[:dims]
        return vector / max(float(numpy.linalg.norm(vector)), 1e-12)

    def ranking(dims: int = 256, weight: Vector | None = None, feedback: float = 0.0,
                lexical: float = 0.0, centred: bool = False) -> dict[str, list[str]]:
        units = numpy.stack([embed(documents[key], dims, weight, centred) for key in keys])
        out = {}
        for case in cases:
            query = embed(case.text, dims, weight, centred)
            scores = units @ query
            if feedback:
                query = query + feedback * units[numpy.argsort(-scores, kind="stable")[:5]].mean(axis=0)
                scores = units @ (query / numpy.linalg.norm(query))
            if lexical:
                bm25 = _bm25({k: _stemmed(v) for k, v in documents.items()}, _stemmed(case.text))
                top = {key: 1 - rank / max(len(bm25), 1) for rank, key in enumerate(bm25)}
                scores = scores + lexical * numpy.array([top.get(key, 0.0) for key in keys])
            out[case.id] = [keys[at] for at in numpy.lexsort((numpy.arange(len(keys)), -scores))]
        return out

    zipf = numpy.log1p(numpy.arange(len(matrix), dtype=numpy.float32))
    variants = {"as served (256 dimensions, mean)": ranking(), "first 128 dimensions": ranking(dims=128),
                "first 64 dimensions": ranking(dims=64), "Zipf weights log(1 + id)": ranking(weight=zipf),
                "feedback 1.0 x mean of top 5": ranking(feedback=1.0), "+ 0.10 x stemmed BM25 rank": ranking(
                    lexical=0.10), "the token matrix's mean removed": ranking(centred=True)}
    print()
    for name, rankings in variants.items():
        line = [f"{half} recall@5 {r:.2f} MRR {m:.2f}" for half in HALVES
                for r, m, _, _ in [_scores(rankings, [c for c in cases if c.half == half])]]
        print(f"  dense variant {name:<34} {';  '.join(line)}")


def _stemmed(text: str) -> str:
    """Each word cut to a crude stem (-ing, -ed, -es, -s, -ly): enough to let "locks" meet "lock"."""
    def cut(word: str) -> str:
        for suffix in ("ing", "ed", "es", "s", "ly"):
            if len(word) > len(suffix) + 3 and word.endswith(suffix):
                return word[:-len(suffix)]
        return word
    return " ".join(cut(word) for word in _WORD.findall(text.lower()))
