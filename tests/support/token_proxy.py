"""A loopback forwarder that adds the daemon's bearer token to every request, for a client that cannot send a
header of its own (the conformance suite's CLI has no header option).

It rewrites nothing else: each request's head goes through with `Authorization: Bearer <token>` added and
`Connection: close` (so every request starts a connection of its own, and the head is the only thing parsed),
and every byte of bodies and answers is copied as it comes, Host and Origin included, so the daemon's guards see
exactly what the client sent.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

_HEAD_END = b"\r\n\r\n"
_MAX_HEAD = 64 * 1024
_DROPPED = (b"authorization:", b"connection:")


def _with_token(head: bytes, token: str) -> bytes:
    request_line, *fields = head.split(b"\r\n")
    kept = [field for field in fields if not field.lower().startswith(_DROPPED)]
    added = [f"Authorization: Bearer {token}".encode("ascii"), b"Connection: close"]
    return b"\r\n".join([request_line, *kept, *added]) + _HEAD_END


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def _forward(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter,
                   target: tuple[str, int], token: str) -> None:
    try:
        head = await client_reader.readuntil(_HEAD_END)
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        client_writer.close()
        return
    daemon_reader, daemon_writer = await asyncio.open_connection(*target)
    daemon_writer.write(_with_token(head[: -len(_HEAD_END)], token))
    await asyncio.gather(_copy(client_reader, daemon_writer), _copy(daemon_reader, client_writer))


@contextmanager
def token_proxy(daemon_url: str, token: str) -> Iterator[str]:
    """A URL on a free loopback port that forwards to `daemon_url` (same path) with `token` added."""
    parts = urlsplit(daemon_url)
    target = (parts.hostname or "127.0.0.1", parts.port or 80)
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, asyncio.AbstractServer] = {}

    async def start() -> None:
        holder["server"] = await asyncio.start_server(
            lambda r, w: _forward(r, w, target, token), "127.0.0.1", 0, limit=_MAX_HEAD)
        started.set()

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=10)
    started.wait(timeout=10)
    port = holder["server"].sockets[0].getsockname()[1]
    try:
        yield parts._replace(netloc=f"127.0.0.1:{port}").geturl()
    finally:
        async def stop() -> None:
            holder["server"].close()
            current = asyncio.current_task()
            for task in [t for t in asyncio.all_tasks() if t is not current]:
                task.cancel()

        try:
            asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=10)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            loop.close()
