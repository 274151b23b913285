"""The daemon's holdup tier: under a flood, repeated cut-offs and accept errors are one line per
interval, with a count; a request's body is read whole before the app sees it, but never past its bound."""

import asyncio
import logging
import resource

import pytest

from serve.holdup import (
    MAX_CONNECTIONS_CEILING,
    BodyDeadline,
    RateLimitedLog,
    max_connections,
    quiet_accept_errors,
)
from serve.http_guard import Message, Receive, Scope, Send
from serve.server import MAX_REQUEST_BODY_BYTES, build_app
from serve.tooling import ServeSettings
from theurian.daemon_address import MCP_PATH


def test_a_repeated_event_is_logged_once_an_interval_with_how_many_were_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = RateLimitedLog(interval=3600)
    with caplog.at_level(logging.WARNING, logger="theurian.serve"):
        for _ in range(1000):
            log.warning("accept", "cannot accept a connection")
        log.warning("headers", "slow headers")
    assert [r.getMessage() for r in caplog.records] == ["cannot accept a connection", "slow headers"]


def test_the_count_left_out_rides_on_the_next_line_once_the_interval_passed(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    log = RateLimitedLog(interval=10, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="theurian.serve"):
        for second in range(8):  # one logged, seven left out inside the interval
            now[0] = 100.0 + second
            log.warning("accept", "cannot accept a connection")
        now[0] = 110.0  # exactly one interval after the logged one: logged again, with the count
        log.warning("accept", "cannot accept a connection")
        now[0] = 119.9  # inside the next interval: left out
        log.warning("accept", "cannot accept a connection")
    assert [r.getMessage() for r in caplog.records] == [
        "cannot accept a connection", "cannot accept a connection (7 more like it in the last 10 s not logged)"]


def test_accept_errors_become_rate_limited_single_lines_and_other_loop_errors_pass_through(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = asyncio.new_event_loop()
    seen: list[str] = []
    loop.set_exception_handler(lambda loop, context: seen.append(context["message"]))
    try:
        quiet_accept_errors(loop)
        with caplog.at_level(logging.WARNING, logger="theurian.serve"):
            for _ in range(50):
                loop.call_exception_handler({"message": "socket.accept() out of system resource",
                                             "exception": OSError(24, "Too many open files")})
            loop.call_exception_handler({"message": "something else"})
    finally:
        loop.close()
    accepts = [r for r in caplog.records if "cannot accept" in r.getMessage()]
    assert len(accepts) == 1 and accepts[0].exc_info is None
    assert accepts[0].getMessage() == "cannot accept a connection: [Errno 24] Too many open files; retrying"
    assert seen == ["something else"]


def test_the_connection_ceiling_is_half_the_descriptor_limit_at_most_the_ceiling() -> None:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    expected = MAX_CONNECTIONS_CEILING if soft == resource.RLIM_INFINITY else min(MAX_CONNECTIONS_CEILING, soft // 2)
    assert max_connections() == max(1, expected)


class _Upload:
    """A client's request body as the ASGI server hands it on: `chunks` messages of `size` bytes, counting what
    has been pulled from it."""

    def __init__(self, chunks: int, size: int) -> None:
        self.chunks = chunks
        self.size = size
        self.pulled = 0  # messages handed on so far

    async def receive(self) -> Message:
        self.pulled += 1
        return {"type": "http.request", "body": b"x" * self.size, "more_body": self.pulled < self.chunks}


def _run_body_deadline(upload: _Upload, max_body_bytes: int) -> tuple[int, int]:
    """(messages pulled when the app was first called, body bytes the app then read), through BodyDeadline."""
    seen: list[int] = []
    read = [0]

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(upload.pulled)
        while True:  # the app reads on, as the SDK does until its own limit answers
            message = await receive()
            read[0] += len(message.get("body", b""))
            if not message.get("more_body"):
                return

    async def send(message: Message) -> None:
        raise AssertionError(f"BodyDeadline answered itself: {message}")

    asyncio.run(BodyDeadline(app, max_body_bytes=max_body_bytes)({"type": "http"}, upload.receive, send))
    return seen[0], read[0]


def test_a_body_within_the_bound_is_read_whole_before_the_app_sees_the_request() -> None:
    upload = _Upload(chunks=4, size=1024)
    assert _run_body_deadline(upload, max_body_bytes=4 * 1024) == (4, 4 * 1024)


def test_a_body_past_the_bound_is_handed_on_unread_beyond_the_first_message_past_it() -> None:
    # 100 KiB sent against a 4 KiB bound: the app (the SDK, whose own limit answers) is called once 5 KiB are in,
    # not after the whole upload is held in memory; what it reads is replayed, then pulled from the client.
    upload = _Upload(chunks=100, size=1024)
    assert _run_body_deadline(upload, max_body_bytes=4 * 1024) == (5, 100 * 1024)


def test_the_daemon_answers_a_body_past_its_bound_413_having_pulled_one_message_past_the_bound() -> None:
    """The whole app as the daemon serves it (BodyDeadline outermost, then the guards, the envelope check and the
    SDK): a client streaming ten times the bound gets the SDK's 413 while at most the bound and one message of it
    has been pulled (and held); the 413 alone, which the SDK gives either way, cannot tell."""
    chunk = 64 * 1024
    upload = _Upload(chunks=10 * MAX_REQUEST_BODY_BYTES // chunk, size=chunk)
    answered: list[tuple[int, int]] = []

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            answered.append((message["status"], upload.pulled))

    headers = [(b"host", b"127.0.0.1:7000"), (b"authorization", b"Bearer t"), (b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream")]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": MCP_PATH, "raw_path": MCP_PATH.encode(), "query_string": b"", "root_path": "",
             "headers": headers, "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 7000)}
    asyncio.run(build_app(ServeSettings("internal"), token=lambda: "t")(scope, upload.receive, send))
    assert answered == [(413, MAX_REQUEST_BODY_BYTES // chunk + 1)]
