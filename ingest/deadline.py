"""A deadline on each request's whole answer, which httpx's timeouts do not give.

httpx bounds each phase (connect, each read, each write), so a server — or a proxy — that sends one byte every
few seconds never trips the read timeout, and an ingest then waits on one response indefinitely, printing
nothing. `DeadlineTransport` wraps the transport githubkit sends through and raises httpx's own `ReadTimeout`
once a request has taken longer than its deadline, counted from the send to the answer's last byte: the retry
policy already treats a timeout as transient, so the request is tried again, announced, and the run gives up
after the policy's attempts like after any other timeout.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Final

import httpx

DEFAULT_DEADLINE_SECONDS: Final = 120.0


class DeadlineTransport(httpx.BaseTransport):
    """`inner` (a plain `httpx.HTTPTransport` unless given), with a deadline of `seconds` on each answer."""

    def __init__(self, seconds: float = DEFAULT_DEADLINE_SECONDS, inner: httpx.BaseTransport | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._seconds = seconds
        self._inner = inner if inner is not None else httpx.HTTPTransport()
        self._clock = clock

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = self._clock() + self._seconds
        response = self._inner.handle_request(request)
        if self._clock() > deadline:
            response.close()
            raise _late(request, self._seconds)
        assert isinstance(response.stream, httpx.SyncByteStream)  # a sync transport answers with a sync stream
        return httpx.Response(
            status_code=response.status_code, headers=response.headers, extensions=response.extensions,
            stream=_BeforeDeadline(response.stream, deadline, self._clock, request, self._seconds),
        )

    def close(self) -> None:
        self._inner.close()


class _BeforeDeadline(httpx.SyncByteStream):
    """The answer's bytes, as long as they keep arriving before the deadline."""

    def __init__(self, inner: httpx.SyncByteStream, deadline: float, clock: Callable[[], float],
                 request: httpx.Request, seconds: float) -> None:
        self._inner, self._deadline, self._clock = inner, deadline, clock
        self._request, self._seconds = request, seconds

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if self._clock() > self._deadline:
                raise _late(self._request, self._seconds)
            yield chunk

    def close(self) -> None:
        self._inner.close()


def _late(request: httpx.Request, seconds: float) -> httpx.ReadTimeout:
    return httpx.ReadTimeout(f"no whole answer within {seconds:.0f} s", request=request)
