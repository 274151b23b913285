"""Where the daemon listens and which routes it serves: the one owner of the address facts the contract names
(127.0.0.1:7419/mcp) and of the URLs built from them.

In the kernel, not in `serve`, because the CLI spells them too (`serve`'s and `daemon start`'s defaults, `setup
--client`'s lines, `daemon status`) and may import `serve` only to serve: every other command starts without
loading mcp and uvicorn.

    DEFAULT_HOST, DEFAULT_PORT   where `theurian serve` and `daemon start` listen unless told otherwise
    MCP_PATH, COMPAT_PATH        the contract's route, and the same tools under underscore names (serve.compat)
    HEALTH_PATH                  the liveness route `daemon status` and `doctor` ask
    url(host, port, path)        http://host:port/path, an IPv6 host in brackets
    refuse_an_empty_host(host)   the one check of a --host before anything listens
"""

from __future__ import annotations

from typing import Final

from theurian.errors import UsageError

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 7419
MCP_PATH: Final = "/mcp"
COMPAT_PATH: Final = "/mcp/compat"
HEALTH_PATH: Final = "/health"


def url_host(host: str) -> str:
    """`host` as a URL names it: an IPv6 address in brackets (once: a host already bracketed is kept)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def url(host: str, port: int, path: str = "") -> str:
    """http://`host`:`port``path` (`path` empty or starting with /)."""
    return f"http://{url_host(host)}:{port}{path}"


def refuse_an_empty_host(host: str) -> None:
    """Refuse a --host that names no address: the socket layer reads an empty one as 0.0.0.0, every interface,
    which no one typing `--host ""` (an unset shell variable) meant.

    Raises:
        UsageError: `host` is empty or only whitespace.
    """
    if not host.strip():
        raise UsageError(f"--host {host!r} names no address; leave it out for {DEFAULT_HOST} (loopback), or name one")

