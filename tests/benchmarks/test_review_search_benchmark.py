"""Printed figures for `theurian review build` and review.search on a generated lake (not run by default:
`make benchmark`). Nothing here asserts a time; the figures go to docs/review-search.md.

Each build is timed as an operator runs it: `theurian review build --full --json` in a fresh process (`cli_build`),
its interpreter start and imports included, so it forks its readers as the command does (a build in this test's
own process could not: its threads make forking unsafe, `theurian.forked`). Set REVIEW_BENCHMARK_RECORDS to shrink
the lake (default 100,000; at least 3,704, the smallest lake holding the selective filter's pull request, which that
shape must match).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

from evidence.records import canonical_bytes, record_file_name, repository_folder
from projection.review_digest import VERIFIED_DIR
from projection.review_layout import SCHEMA
from projection.review_query import RecordFilter, read_records
from projection.review_store import store_path
from serve.tooling import Call, ServeSettings
from serve.tools.review import review_search
from tests.projection.review_records import pull_request, review, thread
from tests.support.daemon import running_daemon
from tests.support.installation import THEURIAN_BIN, Installation
from tests.support.mcp_client import call_tools
from theurian import registry
from theurian.installation import state_dir
from theurian.project import Project, init_project
from theurian.text import ascii_fold

RECORDS = int(os.environ.get("REVIEW_BENCHMARK_RECORDS", "100000"))
WORDS = ("lock", "retry", "cache", "index", "timeout", "schema", "token", "buffer", "thread", "queue")
# Every shape review.search must answer fast. Record i is in Bench/Repo-(i % 5), pull request i // 3 % 5000 + 1,
# and its text opens with "<word> comment <i>:" followed by the ten words in a fixed cycle (lock retry cache …),
# so "lock cache" is two common words that never touch.
QUERIES: dict[str, dict[str, Any]] = {
    "selective filter (repository + pullRequest)": {"repository": "Bench/Repo-3", "pullRequest": 1235},
    "broad q (a common word)": {"q": "retry"},
    "rare q (one record's number)": {"q": "comment 4242:"},
    "no match: an unknown word": {"q": "zqxj-never-written"},
    "no match: common words that never touch": {"q": "lock cache"},
    "filter + q (repository + a common word)": {"repository": "Bench/Repo-2", "q": "timeout"},
}
# What each shape must find at least, so a shape that matched nothing by mistake is seen (the selective filter
# once matched no record at any size).
MATCHES_AT_LEAST = {"selective filter (repository + pullRequest)": 1, "broad q (a common word)": 20,
                    "rare q (one record's number)": 1, "filter + q (repository + a common word)": 20}
P95_TARGET_MS = {100_000: 25.0, 1_000_000: 100.0}


def _generate(root: Path) -> list[Path]:
    """RECORDS canonical record files, a third of each kind, about 4 KB of text per thread."""
    files = []
    review_dir = root / ".theurian/review"
    for index in range(RECORDS):
        repository = f"Bench/Repo-{index % 5}"
        number = index // 3 % 5000 + 1
        word = WORDS[index % len(WORDS)]
        text = f"{word} comment {index}: " + " ".join(WORDS[(index + k) % 10] for k in range(60))
        kind = index % 3
        if kind == 0:
            record = pull_request(repository, number, f"PR_b{index}", title=f"PR {index} {word}", body=text)
        elif kind == 1:
            record = review(repository, number, f"PRR_b{index}", body=text)
        else:
            record = thread(repository, number, f"PRRT_b{index}", bodies=(text, text.upper(), text[::-1]),
                            path=f"src/module_{index % 300}.py")
        folder = review_dir / repository_folder(repository) / record["kind"]
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / record_file_name(record["recordKey"])
        path.write_bytes(canonical_bytes(record))
        files.append(path)
    return files


def cli_build(installation: Installation, root: Path, *flags: str,
              profile_to: Path | None = None) -> tuple[float, dict[str, Any]]:
    """`theurian review build --project ROOT --json FLAGS` in a fresh process of `installation`: (its wall seconds,
    its `--json` summary). `profile_to`: the same command under `python -m cProfile -o PROFILE_TO -m theurian`
    (the profile covers that process only, not the readers it forks).

    Its modules' bytecode is cached, as an installed tool's is (pip compiles it at install, Python writes it on a
    first import), in a folder of the installation's (`PYTHONPYCACHEPREFIX`), even where this environment says
    PYTHONDONTWRITEBYTECODE: compiling every module afresh cost each build process ~0.4 s. The first build of a
    benchmark fills it."""
    command = [str(THEURIAN_BIN)] if profile_to is None else [
        sys.executable, "-m", "cProfile", "-o", str(profile_to), "-m", "theurian"]
    env = {name: value for name, value in installation.env.items() if name != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(installation.home / "bytecode")
    started = time.perf_counter()
    done = subprocess.run([*command, "review", "build", "--project", str(root), "--json", *flags],
                          env=env, capture_output=True, text=True, encoding="utf-8", timeout=3600, check=False)
    seconds = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)["summary"]
    return seconds, summary


def generated_project(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A registered project "bench" under `tmp_path` with its lake generated (`_generate`): (its root, the files)."""
    root = tmp_path / "bench"
    root.mkdir()
    init_project(root)
    registry.register(root, "bench")
    return root, _generate(root)


def _cpu_seconds() -> float:
    """User + system time of this process (its threads included) and of its children that have exited."""
    spent = os.times()
    return spent.user + spent.system + spent.children_user + spent.children_system


def _parse_seconds(files: list[Path]) -> float:
    started = time.perf_counter()
    for path in files:
        orjson.loads(path.read_bytes())
    return time.perf_counter() - started


def _store_write_seconds(tmp_path: Path, built: Path) -> float:
    """What DuckDB alone costs to store the rows a build stores: every table of the built store copied into a
    fresh file declared as a build declares it (the same compression) and checkpointed, the part of a build no
    parsing, checking or rendering can shrink."""
    copy = tmp_path / "store-write-floor.duckdb"
    started = time.perf_counter()
    with duckdb.connect(str(copy)) as connection:
        connection.execute(SCHEMA)
        connection.execute(f"ATTACH '{built}' AS built (READ_ONLY)")
        for table in ("records", "texts", "word_blocks", "word_pairs"):
            connection.execute(f"INSERT INTO {table} SELECT * FROM built.{table}")
        connection.execute("CHECKPOINT")
    return time.perf_counter() - started


def _timed(action: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _line(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[max(0, round(len(ordered) * 0.95) - 1)]
    return f"  {name:<46} p50 {statistics.median(ordered):7.1f} ms   p95 {p95:7.1f} ms"


@pytest.mark.benchmark
def test_review_build_and_search_figures(tmp_path: Path, installation: Installation) -> None:
    root, files = generated_project(tmp_path)
    size = sum(path.stat().st_size for path in files)

    parse_seconds = _parse_seconds(files)
    one_process, summary = cli_build(installation, root, "--full", "--jobs", "1")
    parse_again = _parse_seconds(files)  # the machine is shared: each build against a parse taken beside it
    cpu_before = _cpu_seconds()
    build_seconds, summary = cli_build(installation, root, "--full")  # every file read: the incremental figure
    cpu_seconds = _cpu_seconds() - cpu_before  # has its own benchmark
    store_seconds = _store_write_seconds(tmp_path, store_path(root))
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    print(f"\nreview build over {summary['records']} records ({size / 1e6:.0f} MB, {summary['texts']} texts), "
          "each `theurian review build --full --json` in a fresh process")
    print(f"  orjson parse only {parse_seconds:6.2f} s;  build, --jobs 1 {one_process:6.2f} s;  "
          f"ratio {one_process / parse_seconds:4.2f}")
    print(f"  orjson parse only {parse_again:6.2f} s;  build, {summary['processes']} processes "
          f"{build_seconds:6.2f} s;  ratio {build_seconds / parse_again:4.2f} (target <= 2.0)")
    print(f"  CPU time of that build (every process and thread): {cpu_seconds:6.2f} s, "
          f"{cpu_seconds / parse_again:4.2f} x the parse; no schedule on {os.cpu_count()} CPUs beats "
          f"{cpu_seconds / (os.cpu_count() or 1) / parse_again:4.2f} x")
    print(f"  peak RSS of the largest build process: {largest:.2f} GB (target: within 8 GB)")
    print(f"  DuckDB alone storing the built rows again (no parse, check or render): {store_seconds:6.2f} s, "
          f"{store_seconds / parse_again:4.2f} x the parse")

    call = Call(ServeSettings("internal"), Project("bench", root.resolve()))
    started = time.perf_counter()
    review_search(call, limit=1)
    print(f"  first call after the build (attach + stamp + verification record): "
          f"{(time.perf_counter() - started) * 1000:.0f} ms")
    for record in (state_dir() / VERIFIED_DIR).iterdir():
        record.unlink()  # a store this installation holds no record for: digested in full, once
    os.utime(store_path(root))  # a new identity, so the open store is re-verified
    started = time.perf_counter()
    review_search(call, limit=1)
    print(f"  first call with no verification record (full row digest): "
          f"{(time.perf_counter() - started) * 1000:.0f} ms")
    print(f"review.search in-process (limit 20), p95 target {P95_TARGET_MS.get(RECORDS, 25.0):.0f} ms; "
          "then the same read as one brute scan (no index, limit 21):")
    for name, arguments in QUERIES.items():
        found = review_search(call, **arguments)["records"]
        assert len(found) >= MATCHES_AT_LEAST.get(name, 0), name
        assert MATCHES_AT_LEAST.get(name) or not found, name
        print(_line(name, _timed(lambda a=arguments: review_search(call, **a), 40)))  # type: ignore[misc]
        where = RecordFilter(repository=arguments.get("repository"), pull_request=arguments.get("pullRequest"),
                             q_folded=ascii_fold(arguments["q"]) if "q" in arguments else None)
        scan = _timed(lambda w=where: read_records(root, w, 21, indexed=False,  # type: ignore[misc]
                                                   stores=call.settings.stores), 40)
        print(_line("  brute scan", scan))

    print("review.search through the daemon (one client connection, limit 20):")
    with running_daemon(installation) as daemon:
        for name, arguments in QUERIES.items():
            batch = [("review.search", {"projectId": "bench", **arguments})] * 40
            call_tools(daemon.mcp_url, batch[:2])  # warm: the daemon's first open verifies the store
            started = time.perf_counter()
            answers = call_tools(daemon.mcp_url, batch)
            per_call = (time.perf_counter() - started) * 1000 / len(batch)
            assert not any(answer.is_error for answer in answers)
            print(f"  {name:<46} mean {per_call:7.1f} ms per call (client round trip included)")
