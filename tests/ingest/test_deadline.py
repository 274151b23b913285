"""A server that answers too slowly to trip any per-read timeout still cannot hold an ingest forever."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from ingest.client import GitHubClient
from ingest.errors import GitHubError
from ingest.retry import MAX_ATTEMPTS

DRIP_SECONDS = 0.05  # far under the client's per-read timeout: each read returns in time
DRIPS = 200  # ten seconds of answer in all, far past the test's deadline


class Dripping(BaseHTTPRequestHandler):
    answered = 0

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self.rfile.read(int(self.headers.get("content-length", "0")))
        type(self).answered += 1
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(DRIPS + 2))
        self.end_headers()
        try:
            self.wfile.write(b"{")
            for _ in range(DRIPS):
                self.wfile.flush()
                time.sleep(DRIP_SECONDS)  # the server's pace, not the test's: nothing here waits on it
                self.wfile.write(b" ")
            self.wfile.write(b"}")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up, as it should


@pytest.fixture
def dripping_url() -> Iterator[str]:
    Dripping.answered = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), Dripping)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_an_answer_dripping_past_the_deadline_times_out_is_retried_and_then_gives_up(dripping_url: str) -> None:
    waits: list[float] = []
    client = GitHubClient(token="t", api_url=dripping_url, deadline=0.3, max_wait=0, sleep=waits.append)
    try:
        with pytest.raises(GitHubError, match="timed out"):
            client.graphql("query { viewer { login } }", {})
    finally:
        client.close()
    assert Dripping.answered == MAX_ATTEMPTS and len(waits) == MAX_ATTEMPTS - 1
