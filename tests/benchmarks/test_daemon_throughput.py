"""review.search throughput through a real daemon at 1, 4, 16 and 32 clients, beside the same search in-process,
and where the time of one call goes (the tool, the input check, the dispatcher's thread hops and JSON, the SDK's
machinery, HTTP). Printed figures only; the target (>= 150 calls/s, p95 <= 4 x in-process p95 at 4 clients) is
read off the output, never asserted on time."""

import asyncio
import http.client
import json
import os
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from mcp import Client

from serve.dispatch import Dispatcher
from serve.server import build_server
from serve.tooling import Call, ServeSettings
from serve.tools import registered_tools
from serve.validation import InputValidator
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_session import McpSession
from tests.support.raw_http import modern_call
from tests.support.sample_project import built_sample_project
from theurian.installation import HOME_OVERRIDE_ENV
from theurian.project import resolve_project

ARGUMENTS = {"projectId": "sample", "q": "lock", "limit": 20}
CALLS_IN_PROCESS = 200
CLIENT_LEVELS = (1, 4, 16, 32)
CALLS_PER_LEVEL = 480  # shared among a level's clients
SETTINGS = ServeSettings(disclosure_ceiling="internal")


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)]


def _line(label: str, samples: list[float], extra: str = "") -> str:
    return f"  {label:<46} p50 {statistics.median(samples):7.2f} ms  p95 {_p95(samples):7.2f} ms{extra}"


def _timed(action: Callable[[], Any], calls: int = CALLS_IN_PROCESS) -> list[float]:
    action()  # warm: the store opened, the schemas compiled
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _dispatcher_level(concurrency: int) -> tuple[float, list[float]]:
    """`concurrency` in-process callers of the dispatcher (what the daemon runs under its transport): calls/s and
    latencies."""
    async def run() -> tuple[float, list[float]]:
        dispatcher = Dispatcher(registered_tools(), SETTINGS)
        await dispatcher.call("review.search", ARGUMENTS)
        samples: list[float] = []

        async def caller() -> None:
            for _ in range(max(1, CALLS_PER_LEVEL // 2 // concurrency)):
                started = time.perf_counter()
                await dispatcher.call("review.search", ARGUMENTS)
                samples.append((time.perf_counter() - started) * 1000)

        started = time.perf_counter()
        await asyncio.gather(*(caller() for _ in range(concurrency)))
        return len(samples) / (time.perf_counter() - started), samples

    return asyncio.run(run())


def _in_process_sdk_samples() -> list[float]:
    async def run() -> list[float]:
        async with Client(build_server(SETTINGS)) as client:
            await client.call_tool("review.search", ARGUMENTS)
            samples = []
            for _ in range(CALLS_IN_PROCESS):
                started = time.perf_counter()
                await client.call_tool("review.search", ARGUMENTS)
                samples.append((time.perf_counter() - started) * 1000)
            return samples

    return asyncio.run(run())


def _daemon_level(daemon: RunningDaemon, clients: int) -> tuple[float, list[float], int]:
    """`clients` threads, each one kept-alive HTTP connection sending 2026-era tools/calls: calls/s, latencies,
    errors."""
    headers, body = modern_call("review.search", ARGUMENTS)
    headers |= {"Authorization": f"Bearer {daemon.token}"}
    samples: list[float] = []
    errors = [0]
    lock = threading.Lock()

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60)
        mine = []
        for _ in range(CALLS_PER_LEVEL // clients):
            started = time.perf_counter()
            connection.request("POST", "/mcp", body=body, headers=headers)
            answer = connection.getresponse()
            payload = answer.read()
            mine.append((time.perf_counter() - started) * 1000)
            if answer.status != 200 or json.loads(payload)["result"].get("isError"):
                with lock:
                    errors[0] += 1
        connection.close()
        with lock:
            samples.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    elapsed = time.perf_counter() - started
    return len(samples) / elapsed, samples, errors[0]


@pytest.mark.benchmark
def test_print_review_search_throughput_and_where_the_time_goes(
    module_installation: Installation, module_daemon: RunningDaemon, tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built_sample_project(module_installation, tmp_path_factory.mktemp("throughput") / "sample")
    # In-process calls read the daemon's installation: its store is stamped by the installation that built it.
    for key, value in module_installation.env.items():
        if key in (HOME_OVERRIDE_ENV, "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
            monkeypatch.setenv(key, value)
    tool = next(t for t in registered_tools() if t.name == "review.search")
    project = resolve_project("sample")
    handler_args = {k: v for k, v in ARGUMENTS.items() if k != "projectId"}
    validator = InputValidator()

    handler = _timed(lambda: tool.handler(Call(SETTINGS, project), **handler_args))
    check = _timed(lambda: validator.problem(tool.name, tool.input_schema, ARGUMENTS))
    resolve = _timed(lambda: resolve_project("sample"))
    dispatched = _dispatcher_level(1)[1]
    sdk = _in_process_sdk_samples()
    with McpSession(module_daemon.mcp_url) as session:
        through_sdk_client = _timed(lambda: session.call("review.search", ARGUMENTS))
    print(f"\nreview.search {json.dumps(ARGUMENTS)} on the sample project; where one call's time goes:")
    print(_line("the tool's handler alone (in-process)", handler))
    print(_line("the input check (jsonschema)", check))
    print(_line("project resolution (registry read)", resolve))
    print(_line("dispatcher: resolve + handler, 1 thread hop", dispatched))
    print(_line("in-process SDK Client -> Server", sdk))
    print(_line("daemon over HTTP, the SDK's client", through_sdk_client))
    print(f"in-process (the dispatcher, N concurrent callers) beside the daemon (raw 2026-era POSTs, one kept-alive "
          f"connection per client, {CALLS_PER_LEVEL} calls a level):")
    for clients in CLIENT_LEVELS:
        local_rate, local = _dispatcher_level(clients)
        rate, samples, errors = _daemon_level(module_daemon, clients)
        print(_line(f"{clients:>2} in-process callers: {local_rate:6.1f} calls/s", local))
        print(_line(f"{clients:>2} daemon clients:     {rate:6.1f} calls/s", samples,
                    f"  p95 {_p95(samples) / _p95(local):4.1f} x in-process at {clients}, "
                    f"{_p95(samples) / _p95(handler):4.1f} x the lone handler's; errors {errors}"))
    load = ", ".join(f"{figure:.1f}" for figure in os.getloadavg())
    print(f"machine: {os.cpu_count()} CPUs, load average {load} (1, 5, 15 min) at the end")
