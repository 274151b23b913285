"""`theurian daemon stop` while a client holds a legacy session's GET (SSE) stream open: the stream ends cleanly
for the client and the daemon's log holds no ERROR line."""

import threading

import httpx

from tests.support.daemon import RunningDaemon, bearer, running_daemon
from tests.support.installation import Installation
from tests.support.raw_http import LEGACY_VERSION, initialize_body, post


def _open_stream(daemon: RunningDaemon, opened: threading.Event, outcome: list[str]) -> None:
    with httpx.Client(timeout=30) as client:
        session = post(client, daemon.mcp_url, initialize_body()).headers["mcp-session-id"]
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY_VERSION}
        post(client, daemon.mcp_url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        stream_headers = headers | {"Accept": "text/event-stream"} | bearer(daemon.token)
        try:
            with client.stream("GET", daemon.mcp_url, headers=stream_headers) as response:
                outcome.append(f"status {response.status_code}")
                opened.set()
                for _chunk in response.iter_raw():
                    pass
            outcome.append("ended")
        except httpx.HTTPError as exc:
            outcome.append(f"broken: {type(exc).__name__}")
        finally:
            opened.set()


def test_a_stop_with_an_open_stream_ends_it_cleanly_and_logs_no_error(installation: Installation) -> None:
    outcome: list[str] = []
    opened = threading.Event()
    with running_daemon(installation) as daemon:
        holder = threading.Thread(target=_open_stream, args=(daemon, opened, outcome))
        holder.start()
        assert opened.wait(30)
        stopped = installation.cli("daemon", "stop", check=True)
        holder.join(timeout=30)
        log = daemon.log()
    assert "killed" not in stopped.stdout.lower()
    assert outcome == ["status 200", "ended"]
    assert " ERROR " not in log and "theurian daemon stopped" in log
