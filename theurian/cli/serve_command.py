"""`theurian serve`."""

from __future__ import annotations

from typing import Annotated

import typer

from serve.daemon import DEFAULT_HOST, DEFAULT_PORT
from serve.daemon import serve as run_daemon


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on. Keep it loopback.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to listen on.", min=1, max=65535)] = DEFAULT_PORT,
) -> None:
    """Run the MCP daemon in the foreground (Streamable HTTP at /mcp, liveness at /health); Ctrl-C stops it."""
    run_daemon(host, port)
