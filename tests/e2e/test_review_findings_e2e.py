"""`theurian findings build` then review.findings, through the real CLI and a real MCP client in both eras."""

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from projection.findings_store import STORE_RELATIVE
from serve.tools.findings import (
    FINDINGS_UNAVAILABLE_REFUSAL,
    MAX_FILTER_CHARS,
    MAX_FINDINGS_LIMIT,
    UNDERIVED_FILTER_REFUSAL,
)
from tests.projection.git_fixture import (
    LONG_TEXT,
    STANDARD_FINDINGS,
    STANDARD_HISTORY,
    STANDARD_MALFORMED,
    write_history,
)
from tests.serve.findings_support import check_response
from tests.support.cli_app import invoke
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, call_tools, list_tools
from theurian.cli.pasteable import with_project
from theurian.places import FINDINGS_STORE_ESCAPE_CURE, PATH_ESCAPE_REFUSAL


@pytest.fixture(scope="module")
def projects(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """demo: built here; foreign: built by another installation; unbuilt; escaped: its store links out."""
    base = tmp_path_factory.mktemp("findings-e2e")
    shas = {}
    for name in ("demo", "foreign", "unbuilt"):
        shas[name] = write_history(base / name, STANDARD_HISTORY)
        module_installation.new_project_in_process(base / name, name)
    built = module_installation.cli("findings", "build", "--project", str(base / "demo"), check=True)
    other = Installation(base / "another-installation")
    other.cli_in_process("findings", "build", "--project", str(base / "foreign"))
    escaped = module_installation.new_project_in_process(base / "escaped", "escaped")
    (escaped / ".theurian" / "state").mkdir()
    (base / "outside").mkdir()
    (escaped / STORE_RELATIVE).symlink_to(base / "outside" / "planted.sqlite")
    escaped_build = module_installation.cli("findings", "build", "--project", str(escaped))
    return {"base": base, "shas": shas["demo"], "built": built, "escaped": escaped, "escaped_build": escaped_build}


def test_the_build_prints_its_summary_with_the_malformed_count(projects: dict[str, Any]) -> None:
    built = projects["built"]
    assert built.returncode == 0
    assert built.stdout.strip() == (
        f"built {STORE_RELATIVE}: {STANDARD_FINDINGS} findings from {len(STANDARD_HISTORY)} commits; "
        f"{STANDARD_MALFORMED} malformed Review-Finding lines skipped"
    )


def test_the_build_meets_the_path_escape_refusal_with_its_cure_before_reading_git(
    projects: dict[str, Any],
) -> None:
    escaped = projects["escaped_build"]
    # The project is not a git repository: reaching git first would have failed with git's own message.
    assert escaped.returncode == 1
    # Its cure named with the project the build was given (`theurian.cli.pasteable`).
    cure = with_project(FINDINGS_STORE_ESCAPE_CURE, projects["escaped"])
    assert escaped.stderr.strip() == f"theurian: {PATH_ESCAPE_REFUSAL} {cure}"
    assert list((projects["base"] / "outside").iterdir()) == []


def test_the_build_outside_a_project_fails_in_one_line(
    module_installation: Installation, tmp_path: Path
) -> None:
    result = module_installation.cli("findings", "build", "--project", str(tmp_path))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("theurian: ") and "theurian init" in result.stderr


def test_every_findings_command_has_help() -> None:
    # In-process: the console script's own help runs are tests/e2e/test_cli_surface.py's.
    for args in (("findings", "--help"), ("findings", "build", "--help")):
        result = invoke(args)
        assert result.exit_code == 0, result.output
        assert "findings" in result.output.lower() and "Usage" in result.output


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_real_client_is_served_and_refused_exactly_to_the_contract(
    projects: dict[str, Any], module_daemon: RunningDaemon, mode: Mode
) -> None:
    shas = projects["shas"]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("review.findings", {"projectId": "demo"}),
        ("review.findings", {"projectId": "demo", "limit": 2}),
        ("review.findings", {"projectId": "demo", "severity": "CRITICAL", "q": "llll"}),
        ("review.findings", {"projectId": "demo", "limit": MAX_FINDINGS_LIMIT + 1}),
        ("review.findings", {"projectId": "demo", "reviewer": "perf"}),
        ("review.findings", {"projectId": "demo", "commitSha": shas[1][:7]}),
        ("review.findings", {"projectId": "demo", "q": "x" * (MAX_FILTER_CHARS + 1)}),
        ("review.findings", {"projectId": "demo", "q": "log\u0000zzz"}),
        ("review.findings", {"projectId": "demo", "pullRequest": 0}),
        ("review.findings", {"projectId": "demo", "pullRequest": 42}),
        ("review.findings", {"projectId": "foreign"}),
        ("review.findings", {"projectId": "unbuilt"}),
        ("review.findings", {"projectId": "escaped"}),
        ("system.capabilities", {}),
    ]
    answers = call_tools(module_daemon.mcp_url, calls, mode)
    whole, page, long_one = (check_response(a.structured) for a in answers[:3])
    assert whole["count"] == STANDARD_FINDINGS and whole["truncated"] is False
    assert [f["commitSha"] for f in whole["findings"]][:2] == [shas[4], shas[4]]
    assert page["findings"] == whole["findings"][:2] and page["truncated"] is True
    assert [f["findingText"] for f in long_one["findings"]] == [LONG_TEXT[:2000] + "..."]
    refusals = answers[3:13]
    assert all(a.is_error for a in refusals)
    assert "between 1 and 100" in refusals[0].text
    assert "'perf'" in refusals[1].text and "omit the filter" in refusals[1].text
    assert repr(shas[1][:7]) in refusals[2].text
    assert f"a value of {MAX_FILTER_CHARS + 1} characters" in refusals[3].text and "xxxx" not in refusals[3].text
    assert "NUL (U+0000)" in refusals[4].text
    assert "between 1 and 9223372036854775807" in refusals[5].text
    assert refusals[6].text == UNDERIVED_FILTER_REFUSAL
    assert refusals[7].text == refusals[8].text == FINDINGS_UNAVAILABLE_REFUSAL
    assert refusals[9].text == f"{PATH_ESCAPE_REFUSAL} {FINDINGS_STORE_ESCAPE_CURE}"
    capabilities = answers[13].structured
    assert capabilities is not None and capabilities["capabilities"]["reviewFindings"] is True
    assert "review.findings" in capabilities["tools"]


def test_tools_list_publishes_the_input_and_response_schemas(module_daemon: RunningDaemon) -> None:
    [tool] = [t for t in list_tools(module_daemon.mcp_url) if t.name == "review.findings"]
    assert set(tool.input_schema["properties"]) == {  # flattened: the shared context's keys are listed too
        "reviewer", "severity", "commitSha", "q", "limit", "pullRequest", "family", "specialist",
        "projectId", "snapshotId", "agentId", "taskId",
    }
    assert tool.output_schema["$id"] == "https://theurian.dev/schemas/mcp/review-findings-response.schema.json"


STRING_FILTERS = ("reviewer", "severity", "commitSha", "q", "family", "specialist")


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_nul_and_a_201_character_string_are_refused_for_every_string_filter_over_the_real_wire(
    projects: dict[str, Any], module_daemon: RunningDaemon, mode: Mode
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    for key in STRING_FILTERS:
        calls += [("review.findings", {"projectId": "demo", key: "Z" * (MAX_FILTER_CHARS + 1)}),
                  ("review.findings", {"projectId": "demo", key: "ab\u0000cd"}),
                  ("review.findings", {"projectId": "demo", key: "\u0000"})]
    calls += [("review.findings", {"projectId": "demo", "reviewer": "Z" * MAX_FILTER_CHARS}),
              ("review.findings", {"projectId": "demo", "q": "Z" * MAX_FILTER_CHARS})]
    answers = call_tools(module_daemon.mcp_url, calls, mode)
    for index, key in enumerate(STRING_FILTERS):
        long_one, nul_inside, nul_alone = answers[3 * index:3 * index + 3]
        assert long_one.is_error and nul_inside.is_error and nul_alone.is_error, key
        assert f"`{key}`" in long_one.text and f"bounded at {MAX_FILTER_CHARS} characters" in long_one.text
        assert f"a value of {MAX_FILTER_CHARS + 1} characters" in long_one.text and "ZZZZ" not in long_one.text
        assert f"`{key}`" in nul_inside.text and "NUL (U+0000)" in nul_inside.text
        assert "ab\x00cd" not in nul_inside.text and "'ab" not in nul_inside.text  # refused, not echoed
        assert "NUL (U+0000)" in nul_alone.text
    quoted, searched = answers[-2:]
    assert quoted.is_error and repr("Z" * MAX_FILTER_CHARS) in quoted.text
    assert searched.is_error is False and searched.structured is not None
    assert check_response(searched.structured)["count"] == 0


def _commit_with_a_finding(root: Path, *args: str) -> None:
    # Dated in the past: staleness is which commit HEAD names, not when it was committed.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}
    subprocess.run(["git", "-C", str(root), *args], env=env, check=True, capture_output=True)


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_store_is_refused_once_head_names_another_commit_until_head_is_back_where_it_was_built(
    module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path, mode: Mode
) -> None:
    root = tmp_path / "moving"
    write_history(root, STANDARD_HISTORY)
    project_id = f"moving-{mode}"
    module_installation.new_project_in_process(root, project_id)
    module_installation.cli_in_process("findings", "build", "--project", str(root))
    call = [("review.findings", {"projectId": project_id})]
    [before] = call_tools(module_daemon.mcp_url, call, mode)
    assert check_response(before.structured)["count"] == STANDARD_FINDINGS
    _commit_with_a_finding(root, "commit", "--allow-empty", "-q", "-m",
                           "later\n\nReview-Finding: security HIGH \u2014 committed after the build")
    [stale] = call_tools(module_daemon.mcp_url, call, mode)
    assert stale.is_error and stale.text == FINDINGS_UNAVAILABLE_REFUSAL
    _commit_with_a_finding(root, "reset", "-q", "--hard", "HEAD~1")  # HEAD names the commit the store was built at
    [again] = call_tools(module_daemon.mcp_url, call, mode)
    assert check_response(again.structured)["count"] == STANDARD_FINDINGS
