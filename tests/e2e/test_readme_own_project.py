"""README.md's "Using it on your own project" lines, run as written (read from README.md itself, so the test fails
when the README drifts) in an isolated installation against the loopback fake GitHub, then a real MCP client asks
every tool the daemon lists, and each answers; the daily refresh (`theurian sync` again) brings an accepted proposal
into knowledge.get."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from tests.e2e.review_ingest_support import TOKEN, small_corpus
from tests.knowledge.proposal_support import commit_touching, git
from tests.support.daemon import running_daemon
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PUBLIC_REPOSITORY, load_fixture
from tests.support.installation import Installation
from tests.support.mcp_client import ToolAnswer, call_tools, list_tools

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Using it on your own project"
EXPECTED_COMMANDS = [["init"], ["project", "register"], ["review", "allow"], ["sync"], ["serve"]]
THREAD_FILE = "orders/writer.py"  # the resolved thread on the fixture's merged, CI-green pull request 1
PROJECT_ID = "widgets"  # the folder's name, as `project register` defaults it


def readme_lines() -> list[tuple[dict[str, str], list[str]]]:
    """The section's first `sh` block: each line's leading NAME=VALUE assignments, and its words (comments cut)."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", text[text.index(SECTION):], re.DOTALL)
    assert block is not None, f"no sh block under {SECTION!r}"
    lines = []
    for line in block.group(1).splitlines():
        words = shlex.split(line, comments=True)
        env = {}
        while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
            name, value = words.pop(0).split("=", 1)
            env[name] = value
        lines.append((env, words))
    return lines


def _substituted(words: list[str], root: Path) -> list[str]:
    return [{"PATH": str(root), "OWNER/NAME": PUBLIC_REPOSITORY}.get(word, word) for word in words]


def _your_project(root: Path) -> str:
    """A team's repository before Theurian: history with a Review-Finding trailer and the commit that fixed what the
    fixture's resolved thread on THREAD_FILE raised. Returns that fix commit."""
    root.mkdir()
    git(root, "init", "-q")
    fix = commit_touching(root, THREAD_FILE, message="Take the lock after the reads\n\nReview-Finding: adversarial "
                          "HIGH — a retry that takes the lock before reading can deadlock against the sweeper")
    commit_touching(root, "docs/notes.md", message="notes")
    return fix


def _answered(url: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, ToolAnswer]:
    answers = dict(zip([name for name, _ in calls], call_tools(url, calls), strict=True))
    refused = {name: answer.text for name, answer in answers.items() if answer.is_error}
    assert not refused, refused
    return answers


def _candidate(record: dict[str, Any], fix: str) -> dict[str, Any]:
    return {"projectId": PROJECT_ID, "repository": record["repository"], "recordKey": record["recordKey"],
            "fixCommit": fix, "itemId": "reliability.lock-after-reads", "title": "Acquire locks after reads",
            "body": "# Acquire locks after reads\n\nA lock held across slow reads blocks every writer.\n",
            "kind": "convention", "category": "reliability-rule", "owner": "orders-team", "author": "agent-7",
            "evidenceTrail": ["The reviewer asked to move the lock after the reads; the fix did."]}


def test_the_readme_lines_end_with_a_daemon_where_every_tool_answers(installation: Installation,
                                                                      tmp_path: Path) -> None:
    lines = readme_lines()
    assert [words[1:3] if words[1:2] in (["project"], ["review"]) else words[1:2] for _, words in lines] == \
        EXPECTED_COMMANDS, lines
    assert all(words[0] == "theurian" for _, words in lines)
    root = tmp_path / PROJECT_ID
    fix = _your_project(root)
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        # The README's token placeholder gets the fake's token; the fake stands where api.github.com would.
        fake_env = {"GITHUB_API_URL": fake.url}
        *setup, (serve_env, serve_words) = lines
        for env, words in setup:
            env = {name: TOKEN if value == "TOKEN" else value for name, value in env.items()}
            done = installation.cli(*_substituted(words, root)[1:], cwd=tmp_path, extra_env=fake_env | env)
            assert done.returncode == 0, (words, done.stdout, done.stderr)
            assert "Traceback" not in done.stderr
        synced = done.stdout
        assert re.search(r"^review ingest\s+done\s+Acme/Widgets: completed", synced, re.M), synced
        assert all(re.search(rf"^{stage}\s+done", synced, re.M) for stage in
                   ("review build", "findings build", "migrate apply", "index build")), synced
        # The daemon: the README's line exactly, on a free port (tests never take 7419).
        assert (serve_env, serve_words) == ({}, ["theurian", "serve"])
        with running_daemon(installation) as daemon:
            listed = {tool.name for tool in list_tools(daemon.mcp_url)}
            project = {"projectId": PROJECT_ID}
            first = _answered(daemon.mcp_url, [
                ("system.capabilities", {}),
                ("project.list", {}),
                ("review.search", project | {"filePath": THREAD_FILE, "threadState": "resolved"}),
                ("review.findSimilar", project | {"situation": "a lock taken before the reads it guards"}),
                ("review.listConcerns", project),
                ("review.findings", project | {"severity": "HIGH"}),
                ("knowledge.status", project),
                ("knowledge.search", project | {"query": "lock"}),
            ])
            [thread] = [r for r in first["review.search"].structured["records"]  # type: ignore[index]
                        if r["kind"] == "review-thread"]
            assert first["review.findings"].structured["count"] == 1  # type: ignore[index]
            drafted = _answered(daemon.mcp_url, [("review.generateKnowledgeCandidate", _candidate(thread, fix))])
            proposal = drafted["review.generateKnowledgeCandidate"].structured["proposalId"]  # type: ignore[index]

            # The daily refresh after a person accepted the proposal: the item is served, ranked and changeable.
            installation.cli("propose", "accept", proposal, "--project", str(root), check=True)
            refreshed = installation.cli("sync", "--project", str(root), "--json", extra_env=fake_env | {
                "GITHUB_TOKEN": TOKEN}, check=True)
            stages = {s["stage"]: s["outcome"] for s in json.loads(refreshed.stdout)["summary"]["stages"]}
            assert (stages["migrate apply"], stages["index build"]) == ("done", "done"), stages
            item = "reliability.lock-after-reads"
            [got] = call_tools(daemon.mcp_url, [("knowledge.get", project | {"itemId": item})])
            assert not got.is_error, got.text
            later = _answered(daemon.mcp_url, [
                ("knowledge.get", project | {"itemId": item}),
                ("knowledge.search", project | {"query": "locks reads"}),
                ("knowledge.proposeChange", project | {
                    "itemId": item, "expectedRevision": got.structured["revisionId"],  # type: ignore[index]
                    "body": "Take the lock after every read it depends on.\n", "author": "agent-7"}),
                ("knowledge.generateMigrationDraft", project | {
                    "author": "agent-7", "description": "a shorter name",
                    "operations": [{"op": "addAlias", "alias": "lock-after-reads", "itemId": item}]}),
            ])
            search = later["knowledge.search"].structured
            assert search is not None and search["retrieval"]["indexed"] is True
            assert [r["itemId"] for r in search["results"]] == [item]
    assert listed == set(first) | set(drafted) | set(later), listed
