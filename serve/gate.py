"""Admission gates: at most N calls of one tool in flight; a caller waits a bounded time, then is refused.

Refusing rather than queueing without bound keeps one busy caller from turning every other caller's latency
into its own. Each gated tool has its own gate and its own constant refusal text.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

from serve.errors import ToolRefusal

MAX_CONCURRENT_SEARCHES: Final = 4
ADMISSION_WAIT_SECONDS: Final = 1.0


def capacity_refusal(code: str, tool: str, nothing_done: str) -> str:
    """A review tool's refusal when every permit stayed taken for the whole wait: `code` first, as its constant is
    named, then what was not done ("searched", "listed", ...)."""
    return (f"{code}: {tool} is already answering {MAX_CONCURRENT_SEARCHES} calls and no permit freed within "
            f"{ADMISSION_WAIT_SECONDS} s. Nothing was {nothing_done}; retry shortly.")


class AdmissionGate:
    """A semaphore with a bounded wait and a constant refusal.

    Created per daemon; not shared between event loops.
    """

    def __init__(
        self,
        refusal: str,
        *,
        permits: int = MAX_CONCURRENT_SEARCHES,
        wait_seconds: float = ADMISSION_WAIT_SECONDS,
    ) -> None:
        self.refusal = refusal
        self.permits = permits
        self.wait_seconds = wait_seconds
        self._semaphore = asyncio.Semaphore(permits)

    @asynccontextmanager
    async def admit(self) -> AsyncIterator[None]:
        """Hold a permit for the body of the `async with`.

        Raises:
            ToolRefusal: no permit freed within `wait_seconds` (carries the gate's constant refusal).
        """
        try:
            await asyncio.wait_for(self._semaphore.acquire(), timeout=self.wait_seconds)
        except TimeoutError:
            raise ToolRefusal(self.refusal) from None
        try:
            yield
        finally:
            self._semaphore.release()
