"""The real CLI against the loopback fake: allowlist entries checked before any request, case-variant
duplicates ingested once, `runs/` entries that are not regular files inside the lake skipped and named, and
each run's manifest accounting for its own requests only."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from evidence.records import canonical_bytes
from ingest import allowlist
from tests.e2e.review_ingest_support import copy_project, ingest
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PRIVATE_REPOSITORY, PUBLIC_REPOSITORY
from tests.support.installation import Installation

RUNS = Path(".theurian") / "review" / "runs"


def hand_edit_allowlist(project: Path, *entries: str) -> None:
    items = ", ".join(json.dumps(entry) for entry in entries)  # a JSON string is a TOML basic string here
    (project / ".theurian" / "config.toml").write_text(f"[review]\nallowlist = [{items}]\n", encoding="utf-8")


def summary_runs(result: Any) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = json.loads(result.stdout)["summary"]["runs"]
    return runs


def test_a_kelvin_sign_entry_authorises_no_kitten_and_costs_zero_requests(
        installation: Installation, fake: FakeGitHub, template: Path, tmp_path: Path) -> None:
    project = copy_project(template, tmp_path / "p")
    hand_edit_allowlist(project, "acme/\u212aitten")
    result = ingest(installation, project, fake, "acme/kitten")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert fake.requests == 0


@pytest.mark.parametrize("entry", [" acme/widgets ", "Acme/Widgets/extra", "Acme/W\u0456dgets"])
def test_an_invalid_hand_edited_entry_is_refused_in_one_line_before_any_request(
        installation: Installation, fake: FakeGitHub, template: Path, tmp_path: Path, entry: str) -> None:
    project = copy_project(template, tmp_path / "p")
    hand_edit_allowlist(project, "octo/fine", entry)
    result = ingest(installation, project, fake)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if "entry 1" in line]
    assert len(lines) == 1 and "OWNER/NAME" in lines[0] and "ASCII" in lines[0]
    assert fake.requests == 0


@pytest.mark.parametrize("how", ["allowlist", "arguments"])
def test_case_variant_duplicates_are_ingested_once(installation: Installation, fake: FakeGitHub, template: Path,
                                                   tmp_path: Path, how: str) -> None:
    project = copy_project(template, tmp_path / "p")
    if how == "allowlist":
        hand_edit_allowlist(project, "Acme/Widgets", "acme/widgets")
        result = ingest(installation, project, fake, "--json")
    else:
        result = ingest(installation, project, fake, "Acme/Widgets", "acme/widgets", "--json")
    assert result.returncode == 0, result.stderr
    assert len(summary_runs(result)) == 1 and len(list((project / RUNS).iterdir())) == 1
    assert summary_runs(result)[0]["requests"] == fake.requests


def last_run(project: Path) -> dict[str, Any]:
    manifests = [orjson.loads(p.read_bytes()) for p in sorted((project / RUNS).glob("*.json")) if p.is_file()
                 and not p.is_symlink()]
    return manifests[-1]


def test_a_directory_named_like_a_manifest_is_skipped_and_named_by_status_and_ingest_goes_on(
        installation: Installation, fake: FakeGitHub, ingested: Path, tmp_path: Path) -> None:
    project = copy_project(ingested, tmp_path / "p")
    (project / RUNS / "01K4YQ7N2B3C4D5E6F7G8H9JK0.json").mkdir()
    status = installation.cli("review", "status", "--project", str(project))
    assert status.returncode == 0, status.stderr
    assert f"{RUNS.as_posix()}/01K4YQ7N2B3C4D5E6F7G8H9JK0.json" in status.stdout
    assert "Is a directory" not in status.stdout + status.stderr
    as_json = json.loads(installation.cli("review", "status", "--json", "--project", str(project)).stdout)["summary"]
    assert as_json["unreadableEntries"] == [f"{RUNS.as_posix()}/01K4YQ7N2B3C4D5E6F7G8H9JK0.json"]
    result = ingest(installation, project, fake)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("content", [b"[]", b"null", b'"a string"', b"7"])
def test_a_manifest_that_is_json_but_not_an_object_is_skipped_by_build_and_status(
        installation: Installation, ingested: Path, tmp_path: Path, content: bytes) -> None:
    project = copy_project(ingested, tmp_path / "p")
    name = f"{RUNS.as_posix()}/01K4YQ7N2B3C4D5E6F7G8H9JKM.json"
    (project / name).write_bytes(content)
    build = installation.cli("review", "build", "--project", str(project))
    assert build.returncode == 0, build.stderr
    assert f"skipped {name}: " in build.stdout and "not a JSON object" in build.stdout
    status = installation.cli("review", "status", "--project", str(project))
    assert status.returncode == 0, status.stderr
    assert "unexpected failure" not in status.stdout + status.stderr


def test_a_manifest_linked_from_outside_the_project_is_neither_shown_nor_trusted(
        installation: Installation, fake: FakeGitHub, ingested: Path, tmp_path: Path) -> None:
    project = copy_project(ingested, tmp_path / "p")
    real = last_run(project)
    planted = {**real, "runId": "01ZZZZZZZZZZZZZZZZZZZZZZZZ", "records": [],
               "window": {"since": None, "until": "2030-01-01T00:00:00+00:00"}}
    outside = tmp_path / "outside.json"
    outside.write_bytes(canonical_bytes(planted))
    (project / RUNS / "01ZZZZZZZZZZZZZZZZZZZZZZZZ.json").symlink_to(outside)
    status = installation.cli("review", "status", "--project", str(project))
    assert status.returncode == 0, status.stderr
    assert f"last run {planted['runId']}" not in status.stdout and f"last run {real['runId']}" in status.stdout
    assert f"{RUNS.as_posix()}/01ZZZZZZZZZZZZZZZZZZZZZZZZ.json" in status.stdout
    result = ingest(installation, project, fake, "--json")
    assert result.returncode == 0, result.stderr
    since = summary_runs(result)[0]["window"]["since"]
    assert since is not None and not since.startswith("2029-12-31")


def test_each_run_accounts_for_its_own_requests_and_a_refused_one_for_its_one_request(
        installation: Installation, fake: FakeGitHub, template: Path, tmp_path: Path) -> None:
    project = copy_project(template, tmp_path / "p")
    allowlist.allow(project, PRIVATE_REPOSITORY)
    result = ingest(installation, project, fake, PRIVATE_REPOSITORY, PUBLIC_REPOSITORY, "--json")
    assert result.returncode == 1
    refused, public = summary_runs(result)
    assert (refused["requests"], refused["retries"]) == (1, 0) and refused["graphqlPoints"] > 0
    assert public["requests"] == fake.requests - 1
    assert public["graphqlPoints"] == fake.graphql_points - refused["graphqlPoints"]
    on_disk = orjson.loads((project / RUNS / f"{public['runId']}.json").read_bytes())
    assert on_disk["requests"] == public["requests"] and on_disk["graphqlPoints"] == public["graphqlPoints"]


def test_a_second_repository_in_one_invocation_is_not_charged_for_the_first(
        installation: Installation, fake: FakeGitHub, ingested: Path, tmp_path: Path) -> None:
    project = copy_project(ingested, tmp_path / "p")
    fake.repositories["octo/copy"] = {**fake.repositories["acme/widgets"], "nameWithOwner": "octo/Copy"}
    allowlist.allow(project, "octo/copy")
    result = ingest(installation, project, fake, "--json")
    assert result.returncode == 0, result.stderr
    first, second = summary_runs(result)
    assert first["requests"] == 1  # nothing changed since the last run: one page
    assert second["requests"] == fake.requests - 1
    on_disk = orjson.loads((project / RUNS / f"{second['runId']}.json").read_bytes())
    assert on_disk["requests"] == second["requests"]


def test_a_run_that_fails_before_its_first_page_reports_what_it_spent(
        installation: Installation, fake: FakeGitHub, template: Path, tmp_path: Path) -> None:
    project = copy_project(template, tmp_path / "p")
    fake.fault_plan, fake.fault_every = ["502"], 1  # every request answers 502
    result = ingest(installation, project, fake, "--json")
    assert result.returncode == 1 and "502" in result.stderr
    (run,) = summary_runs(result)
    assert fake.requests == 6
    assert (run["requests"], run["retries"], run["status"]) == (6, 5, "failed")
    assert not os.path.exists(project / RUNS) or not any((project / RUNS).iterdir())


def test_a_token_holding_a_newline_costs_zero_requests_and_is_never_shown(
        installation: Installation, fake: FakeGitHub, template: Path, tmp_path: Path) -> None:
    project = copy_project(template, tmp_path / "p")
    result = installation.cli("review", "ingest", "--max-wait", "0", "--project", str(project),
                              extra_env={"GITHUB_TOKEN": "ghp_first\nsecond", "GITHUB_API_URL": fake.url})
    assert result.returncode == 1 and "GITHUB_TOKEN" in result.stderr and "Traceback" not in result.stderr
    assert "ghp_first" not in result.stderr + result.stdout and "second" not in result.stderr + result.stdout
    assert len(result.stderr.strip().splitlines()) == 1 and fake.requests == 0
