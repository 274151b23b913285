"""Planted credentials, participant names and hidden characters through the real CLI, the store and a real MCP
client: nothing of a credential under `.theurian/` or in any answer, the summary naming what was redacted and
where, block and warn as configured, `review scan` over an older lake (killed part-way and run again), and
pseudonyms stable across runs and served."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

from evidence.content_policy import project_salt
from evidence.lake_read import iter_records
from evidence.redaction import PSEUDONYM_PATTERN
from projection.review_store import STORE_RELATIVE
from tests.e2e.review_ingest_support import (
    FIRST_PLANTED,
    HIDDEN_TEXT,
    KINDS,
    NEEDLES,
    SPLIT,
    assert_no_needle,
    configure,
    copy_project,
    everything_under,
    ingest,
    planted_corpus,
    planted_small_corpus,
    record_files,
    salted_template,
)
from tests.support.daemon import RunningDaemon
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import load_fixture
from tests.support.installation import THEURIAN_BIN, Installation
from tests.support.mcp_client import call_tools
from theurian.hidden_characters import CLASSES
from theurian.secret_scan import fingerprint

LOGINS = ("alice", "bob-reviewer", "ci-bot", "U_kgDOAAAlice", "U_kgDOBBBob")


def store_text(project: Path) -> str:
    """Every value of every table of the built review store, as text (its file may compress strings)."""
    with duckdb.connect(str(project / STORE_RELATIVE), read_only=True) as db:
        tables = [row[0] for row in db.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        return "\n".join(str(db.execute(f'SELECT * FROM "{t}"').fetchall()) for t in tables)


@pytest.fixture(scope="module")
def corpus() -> dict[str, Any]:
    return planted_small_corpus()


@pytest.fixture(scope="module")
def template(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return salted_template(module_installation, tmp_path_factory)


@pytest.fixture(scope="module")
def redacted(template: Path, module_installation: Installation, tmp_path_factory: pytest.TempPathFactory,
             corpus: dict[str, Any]) -> tuple[Path, subprocess.CompletedProcess[str]]:
    project = copy_project(template, tmp_path_factory.mktemp("redacted") / "p")
    with FakeGitHub(corpus).running() as fake:
        result = ingest(module_installation, project, fake, "--json")
    assert result.returncode == 0, result.stderr
    return project, result


def test_ingesting_planted_credentials_leaves_none_under_theurian_and_the_summary_names_each(
    redacted: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    project, result = redacted
    assert_no_needle(everything_under(project), ".theurian/")
    assert_no_needle(result.stdout + result.stderr, "the ingest's output")
    (run,) = orjson.loads(result.stdout)["summary"]["runs"]
    expected = dict.fromkeys(KINDS, 5) | {"github-token": 6}  # title, body, review, comment, hunk; + the split one
    assert run["secrets"]["policy"] == "redact" and run["secrets"]["findings"] == expected
    named = {(r["kind"], r["recordKey"]): r for r in run["secrets"]["records"]}
    assert {r["action"] for r in named.values()} == {"redacted"}
    pull = next(r for r in named.values() if r["kind"] == "pull-request")
    assert sorted(f["field"] for f in pull["fields"]) == ["body", "title"]
    threads = [r for r in named.values() if r["kind"] == "review-thread"]
    assert len(threads) == len(KINDS) + 1
    salt = project_salt(project)
    records = {(e.record["kind"], e.record["recordKey"]): e.record for e in iter_records(project) if e.record}
    for (kind, key), entry in named.items():
        assert records[(kind, key)]["redactions"] == sorted(entry["fields"], key=lambda f: tuple(f.values()))
    split = next(r for r in threads if r["fields"][0]["fingerprint"] == fingerprint(salt, SPLIT))
    assert [f["type"] for f in split["fields"]] == ["github-token"]


def test_the_text_summary_says_what_was_redacted_and_where(
    template: Path, module_installation: Installation, tmp_path: Path, corpus: dict[str, Any]
) -> None:
    project = copy_project(template, tmp_path / "p")
    with FakeGitHub(corpus).running() as fake:
        result = ingest(module_installation, project, fake)
    lines = result.stdout.splitlines()
    total = 5 * len(KINDS) + 1
    assert lines[1].startswith(f"  secrets (policy redact): {total} found (aws-access-key 5, azure-storage-key 5, ")
    assert lines[1].endswith(f" in {3 * len(KINDS) + 1} records:")
    named = re.compile(r"  redacted pull-request PR_kwDOPln\d+ \(\.theurian/review/sha256-[0-9a-f]{64}/pull-request/"
                       r"PR_kwDOPln\d+\.[0-9a-f]+\.json\): title: ([a-z-]+) ([0-9a-f]{16}), body: \1 \2")
    assert any(named.fullmatch(line) for line in lines)
    assert lines[-1].startswith("  … and ") and lines[-1].endswith(".json")
    assert_no_needle(result.stdout + result.stderr, "the ingest's output")


def test_a_re_run_leaves_every_redacted_record_byte_identical(
    redacted: tuple[Path, subprocess.CompletedProcess[str]], module_installation: Installation, tmp_path: Path,
    corpus: dict[str, Any]
) -> None:
    project = copy_project(redacted[0], tmp_path / "again")
    before = record_files(project)
    with FakeGitHub(corpus).running() as fake:
        result = ingest(module_installation, project, fake, "--full", "--json")
    (run,) = orjson.loads(result.stdout)["summary"]["runs"]
    assert {kind: counts["updated"] + counts["created"] for kind, counts in run["counts"].items()} == {
        "pull-request": 0, "review-submission": 0, "review-thread": 0}
    assert record_files(project) == before


def test_no_credential_reaches_the_store_the_served_rows_or_the_daemons_log_and_rows_label_hidden_characters(
    redacted: tuple[Path, subprocess.CompletedProcess[str]], module_installation: Installation,
    module_daemon: RunningDaemon, tmp_path: Path
) -> None:
    project = copy_project(redacted[0], tmp_path / "served")
    module_installation.cli_in_process("project", "register", str(project), "--id", "planted")
    module_installation.cli_in_process("review", "build", "--project", str(project))
    assert_no_needle(store_text(project), "the review store")
    assert_no_needle(everything_under(project), ".theurian/ after the build")
    numbers = [FIRST_PLANTED + index for index in range(len(KINDS) + 1)]
    answers = call_tools(module_daemon.mcp_url, [
        ("review.search", {"projectId": "planted", "pullRequest": n, "limit": 50}) for n in numbers
    ] + [("review.search", {"projectId": "planted", "q": "REDACTED", "limit": 50})])
    for answer in answers:
        assert answer.is_error is False and answer.structured is not None
        assert_no_needle(answer.text, "a review.search answer")
    assert answers[-1].structured is not None and answers[-1].structured["count"] == 3 * len(KINDS) + 1
    hidden = answers[len(KINDS)].structured
    assert hidden is not None
    labels = {r["kind"]: r["hiddenCharacters"] for r in hidden["records"]}
    assert labels == {"pull-request": list(CLASSES), "review-submission": [], "review-thread": []}
    assert next(r for r in hidden["records"] if r["kind"] == "pull-request")["excerpt"].endswith(HIDDEN_TEXT)
    log = module_daemon.log()
    assert "planted" in log and "review.search" in log  # the calls were logged
    assert_no_needle(log, "the daemon's log")


def test_block_leaves_each_record_holding_a_secret_out_and_names_it(
    template: Path, module_installation: Installation, tmp_path: Path, corpus: dict[str, Any]
) -> None:
    project = copy_project(template, tmp_path / "blocked")
    configure(project, secrets="block")
    with FakeGitHub(corpus).running() as fake:
        result = ingest(module_installation, project, fake, "--json")
    assert result.returncode == 0, result.stderr
    (run,) = orjson.loads(result.stdout)["summary"]["runs"]
    blocked = {(r["kind"], r["recordKey"]) for r in run["secrets"]["records"] if r["action"] == "blocked"}
    assert len(blocked) == 3 * len(KINDS) + 1
    stored = {(e.record["kind"], e.record["recordKey"]) for e in iter_records(project) if e.record}
    assert blocked & stored == set()
    assert_no_needle(everything_under(project), ".theurian/ under block")
    # The small corpus's six pull requests and the hidden-character one (only its thread holds a secret).
    assert run["counts"]["pull-request"]["created"] == 6 + 1


def test_warn_writes_the_record_as_fetched_and_reports_it(
    template: Path, module_installation: Installation, tmp_path: Path, corpus: dict[str, Any]
) -> None:
    project = copy_project(template, tmp_path / "warned")
    configure(project, secrets="warn")
    with FakeGitHub(corpus).running() as fake:
        result = ingest(module_installation, project, fake)
    assert result.returncode == 0, result.stderr
    assert "  secrets (policy warn): " in result.stdout
    assert "  warned review-thread PRRT_kwDOPln" in result.stdout
    assert_no_needle(result.stdout + result.stderr, "the ingest's output")
    lake = everything_under(project).decode("utf-8")
    assert all(needle in lake for needle in NEEDLES if "\n" not in needle)  # JSON escapes a line break


def _first_record(project: Path) -> Path:
    return sorted((project / ".theurian/review").glob("sha256-*/pull-request/*.json"))[0]


def test_review_scan_redacts_and_pseudonymises_an_older_lake_even_killed_part_way_and_run_again(
    template: Path, module_installation: Installation, tmp_path: Path
) -> None:
    corpus = planted_corpus(load_fixture())  # the whole fixture: enough records to stop a scan among them
    older = copy_project(template, tmp_path / "older")
    direct = copy_project(template, tmp_path / "direct")
    configure(older, secrets="off")
    configure(direct, redact_participants=True)
    with FakeGitHub(corpus).running() as fake:
        for project in (older, direct):
            assert ingest(module_installation, project, fake).returncode == 0
    lake = everything_under(older).decode("utf-8")
    assert all(needle in lake for needle in NEEDLES if "\n" not in needle)  # JSON escapes a line break
    configure(older, redact_participants=True)
    configure(older, secrets="redact")  # the later key wins: tomllib refuses a key twice, so rewrite the file
    config = (older / ".theurian/config.toml").read_text(encoding="utf-8").replace('secrets = "off"\n', "")
    (older / ".theurian/config.toml").write_text(config, encoding="utf-8")

    before = record_files(older)
    dry = module_installation.cli("review", "scan", "--dry-run", "--json", "--project", str(older), check=True)
    report = json.loads(dry.stdout)["summary"]
    target = record_files(direct)
    assert report["dryRun"] is True and report["removed"] == []
    assert set(report["rewritten"]) == {path for path, data in before.items() if target[path] != data}
    assert len(report["rewritten"]) > len(before) - 5  # nearly every record names a participant
    assert record_files(older) == before
    assert_no_needle(dry.stdout, "the scan's report")

    first = _first_record(older)
    process = subprocess.Popen([str(THEURIAN_BIN), "review", "scan", "--project", str(older)],
                               env=module_installation.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while b"participant-" not in first.read_bytes() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    reached = sum(b"participant-" in data for data in record_files(older).values())
    print(f"scan stopped by SIGKILL: {process.returncode == -signal.SIGKILL}, {reached} of {len(before)} rewritten")
    assert [e.record_path for e in iter_records(older) if e.record is None] == []  # every file whole, old or new

    done = module_installation.cli("review", "scan", "--project", str(older), check=True)
    assert done.stdout.startswith(f"scanned {len(before)} records under secrets = \"redact\": ")
    assert record_files(older) == target
    assert list((older / ".theurian/review").rglob("*.tmp")) == []
    again = module_installation.cli("review", "scan", "--json", "--project", str(older), check=True)
    assert json.loads(again.stdout)["summary"]["rewritten"] == []
    assert_no_needle(b"".join(record_files(older).values()), "the scanned lake")


def test_pseudonyms_replace_every_login_stay_stable_across_runs_and_are_served(
    template: Path, module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path,
    corpus: dict[str, Any]
) -> None:
    project = copy_project(template, tmp_path / "pseudonyms")
    configure(project, redact_participants=True)
    with FakeGitHub(corpus).running() as fake:
        assert ingest(module_installation, project, fake).returncode == 0
        first = record_files(project)
        assert ingest(module_installation, project, fake, "--full").returncode == 0
    assert record_files(project) == first
    for entry in iter_records(project):
        assert entry.record is not None
        for actor in _actors(entry.record):
            assert PSEUDONYM_PATTERN.fullmatch(actor["login"]) and actor["id"] == actor["login"]
    status = module_installation.cli("review", "status", "--json", "--project", str(project), check=True)
    (row,) = json.loads(status.stdout)["summary"]["repositories"]
    assert row["content"]["redactions"] > 0 and row["content"]["hiddenCharacters"]["bidi-control"] >= 1
    module_installation.cli_in_process("project", "register", str(project), "--id", "pseudonyms")
    module_installation.cli_in_process("review", "build", "--project", str(project))
    (answer,) = call_tools(module_daemon.mcp_url, [("review.search", {"projectId": "pseudonyms", "limit": 50})])
    assert answer.structured is not None and answer.structured["count"] == 50
    for record in answer.structured["records"]:
        name = record["authorDisplayName"]
        assert name is None or (PSEUDONYM_PATTERN.fullmatch(name) and record["authorExternalId"] == name)
    assert not any(login in answer.text for login in LOGINS)


def _actors(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k in {"author", "mergedBy", "resolvedBy"} and isinstance(v, dict)]
        return found + [a for v in value.values() for a in _actors(v)]
    if isinstance(value, list):
        return [a for v in value for a in _actors(v)]
    return []
