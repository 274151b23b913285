"""Raw HTTP against a daemon, where the check under test sits below any MCP client: JSON-RPC posts without a
client's session handling, and sockets that drip their request a byte at a time."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import httpx

from tests.support.daemon import MCP_HEADERS, RunningDaemon, bearer, token_for

MODERN_VERSION = "2026-07-28"
LEGACY_VERSION = "2025-11-25"


def initialize_body(request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
            "params": {"protocolVersion": LEGACY_VERSION, "capabilities": {},
                       "clientInfo": {"name": "raw-test", "version": "0"}}}


def post(client: httpx.Client, url: str, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    """One JSON-RPC POST with the headers every MCP route needs, the daemon's token among them (plus `headers`)."""
    return client.post(url, json=body, headers=MCP_HEADERS | bearer(token_for(url)) | (headers or {}))


def request_head(daemon: RunningDaemon, method: str, path: str, body_length: int = 0) -> bytes:
    head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{daemon.port}\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {daemon.token}\r\n")
    if body_length:
        head += f"Content-Length: {body_length}\r\n"
    return (head + "\r\n").encode("ascii")


def drip(daemon: RunningDaemon, head: bytes, body: bytes, *, drip_head: bool, interval: float,
         give_up_after: float) -> tuple[float, bytes]:
    """Send `head` then `body`, the one named by `drip_head` a byte every `interval` seconds (the other at once),
    until the daemon closes the connection or `give_up_after` seconds pass. Returns the seconds from the first
    byte to the close and whatever the daemon answered."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=give_up_after) as sock:
        sock.settimeout(interval)
        slow, fast = (head, body) if drip_head else (body, head)
        if not drip_head:
            sock.sendall(fast)
        answer = b""
        for index in range(len(slow)):
            if time.monotonic() - started > give_up_after:
                break
            try:
                sock.sendall(slow[index:index + 1])
                chunk = sock.recv(65536)  # waits `interval`, then the next byte
                if not chunk:
                    return time.monotonic() - started, answer
                answer += chunk
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                return time.monotonic() - started, answer
        return time.monotonic() - started, answer


def modern_call(name: str, arguments: dict[str, Any], request_id: int = 1) -> tuple[dict[str, str], bytes]:
    """The headers and body of one 2026-era tools/call, as the SDK's client sends it (no handshake, no session)."""
    params = {"name": name, "arguments": arguments,
              "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
                        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "0"},
                        "io.modelcontextprotocol/clientCapabilities": {}}}
    headers = MCP_HEADERS | {"MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": "tools/call", "Mcp-Name": name}
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
    return headers, body.encode("utf-8")
