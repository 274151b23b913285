"""The daemon's log under a flood: repeated cut-offs and accept errors are one line per interval, with a count."""

import asyncio
import logging
import resource

import pytest

from serve.holdup import MAX_CONNECTIONS_CEILING, RateLimitedLog, max_connections, quiet_accept_errors


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
