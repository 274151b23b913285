"""A tool's admission gate under real concurrency: four calls hold its permits, a fifth arrives, then one more once
they are let go. The tool's own handler runs inside each permit, held until the fifth has been answered."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from serve.dispatch import Dispatcher
from serve.gate import MAX_CONCURRENT_SEARCHES
from serve.tooling import Call, ServeSettings, Tool

BOUND_SECONDS = 30.0  # a bounded wait, far past what a held call needs; never a sleep
HOLDERS = MAX_CONCURRENT_SEARCHES  # the next call is the first one past the gate


@dataclass(frozen=True)
class GateRun:
    held: list[dict[str, Any]]  # the four calls that held a permit, answered once let go
    refused: dict[str, Any]  # the fifth, answered while the four held
    after: dict[str, Any]  # one more, once the four were done


def five_at_once(tool: Tool, arguments: Mapping[str, Any], settings: ServeSettings) -> GateRun:
    """Run `tool` (its real handler) through a real dispatcher as `GateRun` describes."""
    release, entered = threading.Event(), threading.Semaphore(0)

    def blocking(call: Call, **given: Any) -> Mapping[str, Any]:
        entered.release()
        assert release.wait(BOUND_SECONDS)
        return tool.handler(call, **given)

    dispatcher = Dispatcher([dataclasses.replace(tool, handler=blocking)], settings)

    async def scenario() -> GateRun:
        holders = [asyncio.create_task(dispatcher.call(tool.name, dict(arguments))) for _ in range(HOLDERS)]
        for _ in range(HOLDERS):
            assert await anyio.to_thread.run_sync(lambda: entered.acquire(timeout=BOUND_SECONDS))
        refused = await dispatcher.call(tool.name, dict(arguments))
        release.set()
        held = list(await asyncio.gather(*holders))
        return GateRun(held, refused, await dispatcher.call(tool.name, dict(arguments)))

    return asyncio.run(scenario())
