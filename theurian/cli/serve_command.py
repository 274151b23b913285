"""`theurian serve`."""

from __future__ import annotations

from typing import Annotated

import typer

from theurian.daemon_address import DEFAULT_HOST, DEFAULT_PORT, refuse_an_empty_host
from theurian.errors import TheurianError


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on. Keep it loopback.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to listen on.", min=1, max=65535)] = DEFAULT_PORT,
    read_only: Annotated[bool, typer.Option(
        "--read-only", help="Serve the read tools only: the three write-intent tools are not registered.")] = False,
) -> None:
    """Run the MCP daemon in the foreground (Streamable HTTP at /mcp, liveness at /health); Ctrl-C stops it."""
    refuse_an_empty_host(host)
    from theurian.interrupts import import_duckdb_held

    import_duckdb_held()  # the daemon serves the review store
    from serve.daemon import serve as run_daemon

    try:
        run_daemon(host, port, read_only=read_only)
    except TheurianError as exc:  # the daemon logged it as one timestamped record: printing it again would add a
        raise typer.Exit(exc.exit_code) from None  # line without one to its log

