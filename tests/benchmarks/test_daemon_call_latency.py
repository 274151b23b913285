"""Per-call latency through a real daemon, both protocol eras (printed figures, no assertion on time)."""

import statistics
import time

import pytest

from tests.support.daemon import RunningDaemon
from tests.support.mcp_session import McpSession

CALLS = 200


@pytest.mark.benchmark
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_print_system_capabilities_call_latency(module_daemon: RunningDaemon, mode: str) -> None:
    with McpSession(module_daemon.mcp_url, mode) as session:  # type: ignore[arg-type]
        session.call("system.capabilities", {})
        samples = []
        for _ in range(CALLS):
            started = time.perf_counter()
            session.call("system.capabilities", {})
            samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    p95 = samples[int(len(samples) * 0.95) - 1]
    print(f"\n[{mode}] system.capabilities over {CALLS} calls: p50 {statistics.median(samples):.2f} ms, "
          f"p95 {p95:.2f} ms")
