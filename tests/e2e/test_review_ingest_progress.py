"""Ingest progress as a person sees it: the real CLI under a pseudo-terminal draws a bar, and plain lines when
its output is not a terminal; the final summary follows either way."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

from tests.e2e.review_ingest_support import TOKEN, copy_project, ingest, ingest_env
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PUBLIC_REPOSITORY
from tests.support.installation import THEURIAN_BIN, Installation

READ_DEADLINE_SECONDS = 120
PULL_REQUESTS = 6  # small_corpus
FIGURES = re.compile(r"(\d+)/(\d+) pull requests, (\d+) records written, (\d+) points")


def run_under_pty(installation: Installation, project: Path, fake: FakeGitHub) -> tuple[int, str]:
    """Run `theurian review ingest` with stdout and stderr on a pseudo-terminal; its exit code and all output."""
    controller, terminal = pty.openpty()
    args = [str(THEURIAN_BIN), "review", "ingest", "--max-wait", "0", "--project", str(project)]
    process = subprocess.Popen(args, env=installation.env | ingest_env(fake) | {"TERM": "xterm"},
                               stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal)
    os.close(terminal)
    chunks: list[bytes] = []
    deadline = time.monotonic() + READ_DEADLINE_SECONDS
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 1.0)
            if not ready:
                continue
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: every holder of the terminal side has closed it (Linux)
                break
            if not chunk:
                break
            chunks.append(chunk)
        returncode = process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
        os.close(controller)
    return returncode, b"".join(chunks).decode("utf-8")


def test_a_terminal_gets_a_redrawn_bar_with_pull_requests_records_and_points_then_the_summary(
        installation: Installation, fake: FakeGitHub, template: Path, tmp_path: Path) -> None:
    project = copy_project(template, tmp_path / "p")
    returncode, output = run_under_pty(installation, project, fake)
    assert returncode == 0, output
    bar = re.search(r"\r" + re.escape(PUBLIC_REPOSITORY) + r" \[(#+)(-*)\] " + FIGURES.pattern + r"\x1b\[K", output)
    assert bar is not None, output
    filled, done, total, written, points = len(bar[1]), int(bar[3]), int(bar[4]), int(bar[5]), int(bar[6])
    assert (done, total) == (PULL_REQUESTS, PULL_REQUESTS) and filled == 30 and bar[2] == ""
    assert points == fake.graphql_points
    records = sum(1 for _ in (project / ".theurian" / "review").glob("sha256-*/*/*.json"))
    assert written == records
    # The bar's line is ended before the summary, which names the run and its counts.
    summary = re.search(re.escape(PUBLIC_REPOSITORY) + r": completed — (\d+) pull requests; .*"
                        + rf"{fake.requests} requests, {points} points, 0 retries; per 100 pull requests "
                        + rf"{points * 100 / PULL_REQUESTS:.1f} points, "
                        + rf"{fake.requests * 100 / PULL_REQUESTS:.1f} requests", output)
    assert summary is not None and int(summary[1]) == PULL_REQUESTS
    assert output.index("\x1b[K") < summary.start()
    assert "\x1b[K\r\n" in output or "\x1b[K\n" in output
    assert TOKEN not in output


def test_output_that_is_not_a_terminal_stays_plain_lines(installation: Installation, fake: FakeGitHub,
                                                          template: Path, tmp_path: Path) -> None:
    project = copy_project(template, tmp_path / "p")
    result = ingest(installation, project, fake, "--json")
    assert result.returncode == 0, result.stderr
    assert "\r" not in result.stderr and "\x1b" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines and all(FIGURES.search(line) and line.startswith(f"{PUBLIC_REPOSITORY}: ") for line in lines)
    last = FIGURES.search(lines[-1])
    assert last is not None and (int(last[1]), int(last[2])) == (PULL_REQUESTS, PULL_REQUESTS)
    (run,) = json.loads(result.stdout)["summary"]["runs"]
    written = sum(c["created"] + c["updated"] for c in run["counts"].values())
    assert (int(last[3]), int(last[4])) == (written, run["graphqlPoints"])
