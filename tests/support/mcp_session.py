"""One long-lived SDK client connection usable from synchronous code (hypothesis drives many calls through it).

The client's task groups must be entered and exited by the same task, so one task owns the connection and serves
calls from a queue; callers on other threads hand it work and wait on a future.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from types import TracebackType
from typing import Any

from mcp.types import CallToolResult

from tests.support.mcp_client import Mode, connected

CALL_TIMEOUT_SECONDS = 60.0


class McpSession:
    def __init__(self, url: str, mode: Mode = "auto", *, token: str | None = None) -> None:
        """`token`: as `tests.support.mcp_client` takes it (default: the daemon's installation's token)."""
        self.url, self.mode, self.token = url, mode, token
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._queue: asyncio.Queue[tuple[str, dict[str, Any], concurrent.futures.Future[Any]] | None] | None = None
        self._owner: concurrent.futures.Future[None] | None = None

    def __enter__(self) -> McpSession:
        self._thread.start()
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._owner = asyncio.run_coroutine_threadsafe(self._own(ready), self._loop)
        ready.result(timeout=CALL_TIMEOUT_SECONDS)
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        assert self._queue is not None and self._owner is not None
        self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
        self._owner.result(timeout=CALL_TIMEOUT_SECONDS)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=CALL_TIMEOUT_SECONDS)
        self._loop.close()

    def call(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        assert self._queue is not None
        future: concurrent.futures.Future[CallToolResult] = concurrent.futures.Future()
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (name, arguments, future))
        return future.result(timeout=CALL_TIMEOUT_SECONDS)

    async def _own(self, ready: concurrent.futures.Future[None]) -> None:
        self._queue = asyncio.Queue()
        async with connected(self.url, self.mode, self.token) as client:
            ready.set_result(None)
            while (item := await self._queue.get()) is not None:
                name, arguments, future = item
                try:
                    future.set_result(await client.call_tool(name, arguments))
                except BaseException as exc:  # handed to the caller's thread, which re-raises it
                    future.set_exception(exc)
