"""review.search's own admission gate under real concurrency: four calls hold permits, a fifth is refused."""

import asyncio
import dataclasses
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio.to_thread

from projection.review_build import build_review_store
from serve.dispatch import Dispatcher
from serve.tooling import Call, ServeSettings
from serve.tools.review import REVIEW_SEARCH_CAPACITY_REFUSAL, TOOL_NAME, review_search, review_tools
from tests.projection.review_records import copy_fixture_lake
from theurian import registry
from theurian.project import init_project

SETTINGS = ServeSettings("internal")
BOUND_SECONDS = 30.0


def test_a_fifth_concurrent_search_is_refused_with_its_own_constant_and_served_once_permits_free(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    init_project(root)
    registry.register(root, "p")
    copy_fixture_lake(root)
    build_review_store(root)
    release, entered = threading.Event(), threading.Semaphore(0)

    def blocking(call: Call, **arguments: Any) -> Mapping[str, Any]:
        entered.release()
        assert release.wait(BOUND_SECONDS)
        return review_search(call, **arguments)  # the real search, once let through

    [tool] = review_tools()
    dispatcher = Dispatcher([dataclasses.replace(tool, handler=blocking)], SETTINGS)
    arguments = {"projectId": "p", "q": "lock"}

    async def scenario() -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
        holders = [asyncio.create_task(dispatcher.call(TOOL_NAME, arguments)) for _ in range(4)]
        for _ in range(4):
            assert await anyio.to_thread.run_sync(lambda: entered.acquire(timeout=BOUND_SECONDS))
        refused = await dispatcher.call(TOOL_NAME, arguments)
        release.set()
        held = list(await asyncio.gather(*holders))
        after = await dispatcher.call(TOOL_NAME, arguments)
        return held, refused, after

    held, refused, after = asyncio.run(scenario())
    assert refused == {"content": [{"type": "text", "text": REVIEW_SEARCH_CAPACITY_REFUSAL}], "isError": True}
    assert [h["isError"] for h in held] == [False] * 4
    assert all(h["structuredContent"]["count"] >= 1 for h in held)
    assert after["isError"] is False
