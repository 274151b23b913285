"""`theurian serve`."""

from __future__ import annotations

from typing import Annotated

import typer

from theurian import installation, registry
from theurian.daemon_address import DEFAULT_HOST, DEFAULT_PORT, refuse_an_empty_host
from theurian.errors import NotRegularFile, RegistryError, TheurianError
from theurian.files import read_opened


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on. Keep it loopback.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to listen on.", min=1, max=65535)] = DEFAULT_PORT,
    read_only: Annotated[bool, typer.Option(
        "--read-only", help="Serve the read tools only: the three write-intent tools are not registered.")] = False,
) -> None:
    """Run the MCP daemon in the foreground (Streamable HTTP at /mcp, liveness at /health); Ctrl-C stops it."""
    refuse_an_empty_host(host)
    refuse_an_unreadable_registry()
    from theurian.interrupts import import_duckdb_held

    import_duckdb_held()  # the daemon serves the review store
    from serve.daemon import serve as run_daemon

    try:
        run_daemon(host, port, read_only=read_only)
    except TheurianError as exc:  # the daemon logged it as one timestamped record: printing it again would add a
        raise typer.Exit(exc.exit_code) from None  # line without one to its log


def refuse_an_unreadable_registry() -> None:
    """Refuse to start over a registry no call could read as a file: not a regular file (a FIFO, a folder, a
    device), past `registry.MAX_REGISTRY_FILE_BYTES`, or refused by the file system. The daemon reads the registry
    per call, so it would start and refuse every call in one line; its content (TOML a hand edit broke) is still
    each call's to report, as a fault the operator mends while it runs.

    Raises:
        RegistryError: the registry's path and why, in the words `project list` gives for it.
    """
    path = installation.registry_path()
    try:
        read_opened(path, registry.MAX_REGISTRY_FILE_BYTES, follow_link=True)
    except FileNotFoundError:
        return  # no registry is an empty one
    except NotRegularFile as exc:
        raise RegistryError(f"the daemon was not started: the project registry {path} cannot be read: "
                            f"{exc.reason}; replace it with the registry file (removing it leaves no project "
                            "registered)") from None
    except OSError as exc:
        raise RegistryError(f"the daemon was not started: the project registry {path} cannot be read: "
                            f"{exc.strerror or type(exc).__name__}") from None
