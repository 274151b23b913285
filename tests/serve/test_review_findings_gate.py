"""review.findings' own admission gate under real concurrency: four calls hold permits, a fifth is refused."""

import asyncio
import dataclasses
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio.to_thread

from serve.dispatch import Dispatcher
from serve.tooling import Call
from serve.tools.findings import FINDINGS_CAPACITY_REFUSAL, TOOL_NAME, findings_tools
from tests.serve.findings_support import SETTINGS
from theurian import registry
from theurian.project import init_project

BOUND_SECONDS = 30.0


def test_a_fifth_concurrent_call_is_refused_with_the_capacity_constant_and_served_once_permits_free(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    init_project(root)
    registry.register(root, "p")
    release, entered = threading.Event(), threading.Semaphore(0)

    def blocking(call: Call, **arguments: Any) -> Mapping[str, Any]:
        entered.release()
        assert release.wait(BOUND_SECONDS)
        return {"count": 0, "truncated": False, "findings": []}

    [tool] = findings_tools()
    dispatcher = Dispatcher([dataclasses.replace(tool, handler=blocking)], SETTINGS)

    async def scenario() -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
        holders = [asyncio.create_task(dispatcher.call(TOOL_NAME, {"projectId": "p"})) for _ in range(4)]
        for _ in range(4):
            assert await anyio.to_thread.run_sync(lambda: entered.acquire(timeout=BOUND_SECONDS))
        refused = await dispatcher.call(TOOL_NAME, {"projectId": "p"})
        release.set()
        held = list(await asyncio.gather(*holders))
        after = await dispatcher.call(TOOL_NAME, {"projectId": "p"})
        return held, refused, after

    held, refused, after = asyncio.run(scenario())
    assert refused == {"content": [{"type": "text", "text": FINDINGS_CAPACITY_REFUSAL}], "isError": True}
    assert [h["isError"] for h in held] == [False] * 4
    assert after["isError"] is False
