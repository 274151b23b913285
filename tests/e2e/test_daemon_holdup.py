"""A daemon that holds up: slow clients cut off at their bound while /health answers, a flood of legacy sessions
that leaves other clients served, and a log of one timestamped line per event, calls the SDK drops included."""

import math
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from serve.holdup import BODY_DEADLINE_SECONDS, HEADER_DEADLINE_SECONDS, LOG_INTERVAL_SECONDS, REQUEST_TIMEOUT
from serve.tools import registered_tools
from serve.transport import MAX_LEGACY_SESSIONS
from tests.support.daemon import RunningDaemon, running_daemon
from tests.support.installation import THEURIAN_BIN, Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, call_tool, list_tools
from tests.support.mcp_session import McpSession
from tests.support.raw_http import LEGACY_VERSION, MODERN_VERSION, drip, initialize_body, post, request_head

TIMESTAMPED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} [A-Z]+ ")
# Slack for a loaded machine: a cut-off must come after its bound and well before twice it.
SLACK_SECONDS = 5.0


# Long enough for a loaded two-core machine's slowest /health, well under the 10 s a slow client could hold the
# event loop if the deadlines did not free it: a /health that waited on one would still fail.
HEALTH_TIMEOUT_SECONDS = HEADER_DEADLINE_SECONDS / 2


def _health_answers_throughout(daemon: RunningDaemon, stop: threading.Event, failures: list[str]) -> None:
    with httpx.Client(timeout=HEALTH_TIMEOUT_SECONDS) as client:
        while not stop.is_set():
            try:
                if client.get(f"{daemon.base_url}/health").status_code != 200:
                    failures.append("status")
            except httpx.HTTPError as exc:
                failures.append(repr(exc))
            stop.wait(0.25)


def test_a_slow_header_and_a_slow_body_are_cut_off_at_their_bounds_while_health_answers(
    module_daemon: RunningDaemon,
) -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}' * 4
    results: dict[str, tuple[float, bytes]] = {}

    def slow(kind: str, drip_head: bool) -> None:
        head = request_head(module_daemon, "POST", "/mcp", len(body))
        results[kind] = drip(module_daemon, head, body, drip_head=drip_head, interval=1.0,
                             give_up_after=max(HEADER_DEADLINE_SECONDS, BODY_DEADLINE_SECONDS) * 3)

    stop, failures = threading.Event(), []
    watcher = threading.Thread(target=_health_answers_throughout, args=(module_daemon, stop, failures))
    clients = [threading.Thread(target=slow, args=("head", True)), threading.Thread(target=slow, args=("body", False))]
    watcher.start()
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join(timeout=120)
    stop.set()
    watcher.join(timeout=10)
    head_seconds, head_answer = results["head"]
    body_seconds, body_answer = results["body"]
    assert HEADER_DEADLINE_SECONDS - 1 <= head_seconds <= HEADER_DEADLINE_SECONDS + SLACK_SECONDS
    assert head_answer == b""  # no request was ever read, so nothing is answered
    assert BODY_DEADLINE_SECONDS - 1 <= body_seconds <= BODY_DEADLINE_SECONDS + SLACK_SECONDS
    assert body_answer.startswith(f"HTTP/1.1 {REQUEST_TIMEOUT} ".encode())
    assert failures == []
    log = module_daemon.log_once_it_holds("request body was not complete")
    assert "sent no complete request headers within" in log


def test_a_request_inside_its_bounds_is_served_however_it_arrives(module_daemon: RunningDaemon) -> None:
    """Headers and body each in two parts, the second just over half the bound later: served as usual."""
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", ' \
           b'"capabilities": {}, "clientInfo": {"name": "split", "version": "0"}}}'
    head = request_head(module_daemon, "POST", "/mcp", len(body))
    pause = max(HEADER_DEADLINE_SECONDS, BODY_DEADLINE_SECONDS) * 0.55
    with socket.create_connection(("127.0.0.1", module_daemon.port), timeout=30) as sock:
        sock.sendall(head[:20])
        time.sleep(pause)  # the behaviour under test is a pause inside the bound
        sock.sendall(head[20:] + body[:10])
        time.sleep(pause)
        sock.sendall(body[10:])
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200 ")


def test_a_client_gone_mid_body_is_one_log_line(module_daemon: RunningDaemon) -> None:
    with socket.create_connection(("127.0.0.1", module_daemon.port), timeout=10) as sock:
        sock.sendall(request_head(module_daemon, "POST", "/mcp", 1000) + b'{"jsonrpc": "2.0", ')
        time.sleep(0.2)  # let the daemon start reading the body before the client goes
    log = module_daemon.log_once_it_holds("client went away after")
    lines = [line for line in log.splitlines() if "went away" in line]
    assert len(lines) == 1 and "19 bytes of its request body (POST /mcp)" in lines[0]
    assert "Traceback" not in log
    assert all(TIMESTAMPED.match(line) for line in log.splitlines())


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_the_unknown_key_refusal_escapes_what_it_quotes(module_daemon: RunningDaemon, mode: Mode) -> None:
    answer = call_tool(module_daemon.mcp_url, "project.list", {"a\nb\x00c\x1bd\u202ee": 1}, mode)
    assert answer.is_error
    assert answer.text == ("Invalid arguments for project.list: unknown key `a\\nb\\x00c\\x1bd\\u202ee` is not "
                           "accepted by this tool.")


@pytest.mark.parametrize(("version", "name"), [(MODERN_VERSION, "project.list"), (MODERN_VERSION, "no.such"),
                                               (LEGACY_VERSION, "system.capabilities")])
def test_a_notification_shaped_tools_call_is_logged_once_as_unanswered(
    module_daemon: RunningDaemon, version: str, name: str
) -> None:
    notification = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": name, "arguments": {}}}
    with httpx.Client(timeout=10) as client:
        headers = {"MCP-Protocol-Version": version}
        if version == LEGACY_VERSION:
            opened = post(client, module_daemon.mcp_url, initialize_body())
            headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
            post(client, module_daemon.mcp_url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        before = module_daemon.log().count("outcome=unanswered")
        assert post(client, module_daemon.mcp_url, notification, headers).status_code == 202
    shown = name if name != "no.such" else "(unknown)"
    log = module_daemon.log_once_it_holds(f"call tool={shown} project=- outcome=unanswered")
    deadline = time.monotonic() + 2
    while log.count("outcome=unanswered") == before and time.monotonic() < deadline:
        log = module_daemon.log()
    assert log.count("outcome=unanswered") == before + 1


@pytest.fixture
def flood_daemon(installation: Installation) -> Iterator[RunningDaemon]:
    with running_daemon(installation) as running:
        yield running


def test_a_flood_of_legacy_sessions_leaves_other_clients_served(flood_daemon: RunningDaemon) -> None:
    url = flood_daemon.mcp_url
    with McpSession(url, "legacy") as used, httpx.Client(timeout=10) as client:
        assert not used.call("system.capabilities", {}).is_error  # a session in use before the flood

        def open_session() -> str:
            answer = post(client, url, initialize_body())
            assert answer.status_code == 200, answer.text
            return answer.headers["mcp-session-id"]

        def alive(session: str) -> bool:
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY_VERSION}
            return post(client, url, ping, headers).status_code == 200

        flood = [open_session() for _ in range(MAX_LEGACY_SESSIONS - 1)]  # with `used`: exactly the bound
        assert "legacy session limit" not in flood_daemon.log()
        first_eviction = time.monotonic()
        flood.append(open_session())  # one past it: the least recently used session still in its handshake goes
        assert not alive(flood[0]) and alive(flood[1])
        flood += [open_session() for _ in range(50)]
        evicting = time.monotonic() - first_eviction
        assert sum(alive(session) for session in flood[-60:]) == 60
        assert not used.call("system.capabilities", {}).is_error
    assert not call_tool(url, "project.list", {}, "legacy").is_error  # a new legacy client is served too
    # 51 evictions, logged at most once per interval (the first at once), not once each.
    lines = flood_daemon.log().count("legacy session limit")
    assert 1 <= lines <= 1 + math.ceil(evicting / LOG_INTERVAL_SECONDS) < 51


def test_read_only_serves_the_nine_read_tools_on_both_routes_and_says_so(installation: Installation) -> None:
    writes = {"knowledge.proposeChange", "knowledge.generateMigrationDraft", "review.generateKnowledgeCandidate"}
    with running_daemon(installation, options=("--read-only",)) as daemon:
        dotted = sorted(t.name for t in list_tools(daemon.mcp_url))
        compat = sorted(t.name for t in list_tools(daemon.compat_url))
        capabilities = call_tool(daemon.mcp_url, "system.capabilities", {}).structured
        refused = call_tool(daemon.mcp_url, "knowledge.proposeChange", {"projectId": "p"})
        log = daemon.log()
    assert dotted == sorted(t.name for t in registered_tools() if t.name not in writes) and len(dotted) == 9
    assert compat == sorted(name.replace(".", "_") for name in dotted)
    assert capabilities is not None and capabilities["capabilities"]["writeTools"] is False
    assert capabilities["tools"] == dotted
    assert refused.is_error and refused.text.startswith("No tool 'knowledge.proposeChange' is served")
    assert "read-only: the write-intent tools are not registered" in log


NOFILE = 64  # the daemon then admits NOFILE // 2 connections at once


@pytest.fixture
def few_descriptors_daemon(installation: Installation, tmp_path: Path) -> Iterator[RunningDaemon]:
    wrapper = tmp_path / "theurian-few-descriptors"
    wrapper.write_text(f'#!/bin/sh\nulimit -n {NOFILE}\nexec "{THEURIAN_BIN}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    with running_daemon(installation, binary=wrapper) as running:
        yield running


def _health(daemon: RunningDaemon) -> int | str:
    try:
        return httpx.get(f"{daemon.base_url}/health", timeout=5).status_code
    except httpx.HTTPError as exc:
        return type(exc).__name__


def test_connections_past_the_ceiling_are_closed_at_once_and_health_answers_when_they_go(
    few_descriptors_daemon: RunningDaemon,
) -> None:
    ceiling = NOFILE // 2
    held = [socket.create_connection(("127.0.0.1", few_descriptors_daemon.port)) for _ in range(ceiling - 1)]
    try:
        assert _health(few_descriptors_daemon) == 200  # the last connection inside the ceiling is served
        held.append(socket.create_connection(("127.0.0.1", few_descriptors_daemon.port)))
        assert _health(few_descriptors_daemon) != 200  # one past it is closed unanswered
    finally:
        for sock in held:
            sock.close()
    deadline = time.monotonic() + 10
    while _health(few_descriptors_daemon) != 200 and time.monotonic() < deadline:
        time.sleep(0.1)  # the daemon notices the closed connections; bounded by the deadline
    assert _health(few_descriptors_daemon) == 200
    log = few_descriptors_daemon.log()
    assert f"a connection past the limit of {ceiling} open ones was closed" in log


def test_a_burst_of_simultaneous_handshakes_stays_within_the_session_bound(flood_daemon: RunningDaemon) -> None:
    url = flood_daemon.mcp_url
    opened: list[str] = []
    lock = threading.Lock()

    def open_some(count: int) -> None:
        with httpx.Client(timeout=30) as client:
            for _ in range(count):
                answer = post(client, url, initialize_body())
                with lock:
                    opened.append(answer.headers["mcp-session-id"])

    threads = [threading.Thread(target=open_some, args=(10,)) for _ in range(30)]  # 300 handshakes, 30 at a time
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(opened) == 300
    with httpx.Client(timeout=10) as client:
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        alive = sum(post(client, url, ping, {"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY_VERSION})
                    .status_code == 200 for session in opened)
    assert MAX_LEGACY_SESSIONS - 30 <= alive <= MAX_LEGACY_SESSIONS
