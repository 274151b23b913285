"""`theurian review search`, `knowledge search` and `findings list` answer what the daemon answers an agent: the same
structured result for the same arguments, the same refusal in the same words, every row in CSV, a table otherwise."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from projection.trailers import REVIEWERS
from schemas import load
from serve.tools.findings import MAX_FINDINGS_LIMIT
from serve.tools.knowledge import MAX_QUERY_CHARS
from serve.tools.review import MAX_FILTER_CHARS, MAX_REVIEW_SEARCH_LIMIT
from tests.e2e.review_ingest_support import ingest_env, new_project, small_corpus
from tests.knowledge.proposal_support import commit_touching, git
from tests.support.cli_help import help_words
from tests.support.daemon import RunningDaemon
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import BOB, PUBLIC_REPOSITORY, load_fixture
from tests.support.installation import THEURIAN_BIN, Installation
from tests.support.mcp_client import call_tool
from theurian.cli.read_commands import AUTHOR_NOTE, UNTRUSTED_NOTE, response_schema_name, row_fields
from theurian.cli.read_output import csv_cell

REPO = Path(__file__).resolve().parents[2]
PROJECT_ID = "shop"
WIDTH = 120  # the terminal the table test gives the command

# (CLI words, tool, the same arguments as the tool takes them)
SAME_QUESTIONS = [
    (["review", "search", "lock"], "review.search", {"q": "lock"}),
    (["review", "search", "--thread-state", "resolved", "--limit", "2"], "review.search",
     {"threadState": "resolved", "limit": 2}),
    (["review", "search", "--limit", str(MAX_REVIEW_SEARCH_LIMIT)], "review.search",
     {"limit": MAX_REVIEW_SEARCH_LIMIT}),
    (["findings", "list", "--severity", "HIGH"], "review.findings", {"severity": "HIGH"}),
    (["findings", "list", "--limit", str(MAX_FINDINGS_LIMIT)], "review.findings",
     {"limit": MAX_FINDINGS_LIMIT}),
    (["knowledge", "search", "retry flaky tests"], "knowledge.search", {"query": "retry flaky tests"}),
]
SAME_REFUSALS = [
    (["review", "search", "--limit", str(MAX_REVIEW_SEARCH_LIMIT + 1)], "review.search",
     {"limit": MAX_REVIEW_SEARCH_LIMIT + 1}),
    (["review", "search", "--thread-state", "closed"], "review.search", {"threadState": "closed"}),
    (["review", "search", "x" * (MAX_FILTER_CHARS + 1)], "review.search", {"q": "x" * (MAX_FILTER_CHARS + 1)}),
    (["findings", "list", "--limit", str(MAX_FINDINGS_LIMIT + 1)], "review.findings",
     {"limit": MAX_FINDINGS_LIMIT + 1}),
    (["findings", "list", "--severity", "high"], "review.findings", {"severity": "high"}),
    (["findings", "list", "--commit", "abc123"], "review.findings", {"commitSha": "abc123"}),
    (["knowledge", "search", "q", "--as-of", "yesterday"], "knowledge.search", {"query": "q", "asOf": "yesterday"}),
    (["knowledge", "search", "q" * (MAX_QUERY_CHARS + 1)], "knowledge.search",
     {"query": "q" * (MAX_QUERY_CHARS + 1)}),
]


@pytest.fixture(scope="module")
def shop(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registered project with every store built by `theurian sync`: review history from the fake, findings from
    its git history, the bundled sample knowledge applied and indexed."""
    root = new_project(module_installation, tmp_path_factory.mktemp("read") / PROJECT_ID, PUBLIC_REPOSITORY)
    module_installation.cli_in_process("project", "register", str(root))
    for folder in ("migrations", "knowledge"):
        shutil.copytree(REPO / "fixtures/knowledge/sample/.theurian" / folder, root / ".theurian" / folder)
    git(root, "init", "-q")
    commit_touching(root, "a.txt", message="first\n\nReview-Finding: security HIGH — tokens compared with ==")
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        synced = module_installation.cli("sync", "--project", str(root), "--max-wait", "0",
                                         extra_env=ingest_env(fake))
    assert synced.returncode == 0, synced.stdout + synced.stderr
    return root


def _cli(installation: Installation, shop: Path, words: list[str], *flags: str) -> Any:
    return installation.cli(*words, "--project", str(shop), *flags)


def _same_answer(installation: Installation, daemon: RunningDaemon, shop: Path, words: list[str], tool: str,
                 arguments: dict[str, Any]) -> dict[str, Any]:
    """The daemon's structured answer to `tool`, after checking `theurian <words> --json` prints exactly it as its
    summary."""
    answer = call_tool(daemon.mcp_url, tool, {"projectId": PROJECT_ID} | arguments)
    assert not answer.is_error, answer.text
    printed = _cli(installation, shop, words, "--json")
    assert printed.returncode == 0, printed.stderr
    assert answer.structured is not None
    assert json.loads(printed.stdout) == {"command": " ".join(words[:2]), "ok": True, "summary": answer.structured}
    return answer.structured


@pytest.mark.parametrize(("words", "tool", "arguments"), SAME_QUESTIONS, ids=lambda v: str(v)[:40])
def test_the_cli_json_is_the_structured_result_the_daemon_gives_an_agent(
        module_installation: Installation, module_daemon: RunningDaemon, shop: Path, words: list[str], tool: str,
        arguments: dict[str, Any]) -> None:
    structured = _same_answer(module_installation, module_daemon, shop, words, tool, arguments)
    rows = next(structured[key] for key in ("records", "findings", "results") if key in structured)
    assert rows, "the question must match something for the comparison to say anything"


@pytest.mark.parametrize(("words", "tool", "arguments"), SAME_REFUSALS, ids=lambda v: str(v)[:40])
def test_a_refusal_is_the_daemons_refusal_word_for_word(
        module_installation: Installation, module_daemon: RunningDaemon, shop: Path, words: list[str], tool: str,
        arguments: dict[str, Any]) -> None:
    answer = call_tool(module_daemon.mcp_url, tool, {"projectId": PROJECT_ID} | arguments)
    assert answer.is_error
    printed = _cli(module_installation, shop, words)
    assert printed.returncode == 1 and printed.stdout == ""
    assert printed.stderr.splitlines() == [f"theurian: {answer.text}"]
    as_json = _cli(module_installation, shop, words, "--json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout) == {
        "command": " ".join(words[:2]), "ok": False, "summary": {"error": answer.text, "exitCode": 1}}


@pytest.mark.parametrize(("words", "tool", "arguments"), [
    (["review", "search", "x" * MAX_FILTER_CHARS], "review.search", {"q": "x" * MAX_FILTER_CHARS}),
    (["knowledge", "search", "q" * MAX_QUERY_CHARS], "knowledge.search", {"query": "q" * MAX_QUERY_CHARS}),
], ids=["q-at-400", "query-at-2000"])
def test_a_value_exactly_at_its_bound_is_answered_not_refused(
        module_installation: Installation, module_daemon: RunningDaemon, shop: Path, words: list[str], tool: str,
        arguments: dict[str, Any]) -> None:
    _same_answer(module_installation, module_daemon, shop, words, tool, arguments)


def test_csv_holds_every_field_of_every_row_the_json_holds(module_installation: Installation, shop: Path) -> None:
    words = ["review", "search", "--limit", "5"]
    records = json.loads(_cli(module_installation, shop, words, "--json").stdout)["summary"]["records"]
    printed = _cli(module_installation, shop, words, "--csv")
    assert printed.returncode == 0, printed.stderr
    reader = csv.DictReader(io.StringIO(printed.stdout))
    rows = list(reader)
    assert len(rows) == len(records) == 5
    assert reader.fieldnames == row_fields("review.search", "records")
    assert rows == [{key: csv_cell(record.get(key)) for key in reader.fieldnames} for record in records]
    assert all(set(record) <= set(reader.fieldnames) for record in records)


@pytest.mark.parametrize(("words", "tool", "rows_key"), [
    (["review", "search"], "review.search", "records"),
    (["knowledge", "search"], "knowledge.search", "results"),
    (["findings", "list"], "review.findings", "findings"),
], ids=["review", "knowledge", "findings"])
def test_csv_with_no_row_still_prints_the_header_of_every_field_the_row_schema_names(
        module_installation: Installation, shop: Path, words: list[str], tool: str, rows_key: str) -> None:
    printed = _cli(module_installation, shop, [*words, "zzqq no row holds this"], "--csv")
    assert printed.returncode == 0, printed.stderr
    schema = load("mcp", response_schema_name(tool))
    row = schema["$defs"][schema["properties"][rows_key]["items"]["$ref"].removeprefix("#/$defs/")]
    assert printed.stdout == ",".join(row["properties"]) + "\n"


def test_the_table_names_its_columns_and_ends_with_the_count_and_the_untrusted_note(
        module_installation: Installation, shop: Path) -> None:
    printed = _cli(module_installation, shop, ["findings", "list"])
    assert printed.returncode == 0, printed.stderr
    header, *rows, footer = printed.stdout.splitlines()
    assert header.split() == ["committed", "commit", "reviewer", "severity", "finding"]
    assert len(rows) == 1 and "tokens compared with ==" in rows[0]
    assert footer == f"1 finding; {UNTRUSTED_NOTE}"
    nothing = _cli(module_installation, shop, ["review", "search", "no record holds this phrase"])
    assert nothing.stdout.splitlines() == ["no records match"]


def test_a_truncated_answer_and_the_retrieval_path_are_named_under_the_table(
        module_installation: Installation, shop: Path) -> None:
    review = _cli(module_installation, shop, ["review", "search", "--limit", "1"])
    assert review.stdout.splitlines()[-1] == (
        f"1 record; more match: narrow the filters or raise --limit; {UNTRUSTED_NOTE}")
    knowledge = _cli(module_installation, shop, ["knowledge", "search", "retry flaky tests"])
    assert "; ranked by index " in knowledge.stdout.splitlines()[-1]


def test_a_folder_no_registration_names_is_refused_as_an_agent_would_be(
        module_installation: Installation, tmp_path: Path) -> None:
    root = new_project(module_installation, tmp_path / "unregistered")
    printed = module_installation.cli("review", "search", "--project", str(root))
    assert printed.returncode == 1
    assert printed.stderr.splitlines() == [
        f"theurian: {root} is not registered, so no agent can read it: run "
        f"`theurian project register {root}` first"]


def test_json_and_csv_together_are_a_usage_error(module_installation: Installation, shop: Path) -> None:
    printed = _cli(module_installation, shop, ["findings", "list"], "--json", "--csv")
    assert printed.returncode == 2 and "--json and --csv cannot be combined" in printed.stderr


def test_on_a_terminal_every_table_line_fits_its_width(module_installation: Installation, shop: Path) -> None:
    words = ["review", "search", "--limit", "50", "--project", str(shop)]
    whole = module_installation.cli(*words).stdout.splitlines()
    assert max(len(line) for line in whole) > WIDTH, "some excerpt must be wider than the terminal"
    controller, terminal = pty.openpty()
    try:
        with subprocess.Popen([str(THEURIAN_BIN), *words], env=module_installation.env | {"COLUMNS": str(WIDTH)},
                              stdout=terminal, stderr=subprocess.DEVNULL) as process:
            os.close(terminal)
            chunks = []
            while True:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:  # the terminal's other end closed: the command is done
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            assert process.wait(timeout=120) == 0
    finally:
        os.close(controller)
    shown = b"".join(chunks).decode("utf-8").replace("\r\n", "\n").splitlines()
    table = shown[:-1]  # the last line is the count and the note, not a table row
    assert len(table) == len(whole) - 1 and all(len(line) <= WIDTH for line in table), shown
    assert any(line.endswith("...") for line in table)




def test_author_matches_an_authors_id_and_a_login_is_answered_with_how_to_find_the_id(
        module_installation: Installation, shop: Path) -> None:
    by_id = json.loads(_cli(module_installation, shop, ["review", "search", "--author", BOB["id"]], "--json").stdout)
    records = by_id["summary"]["records"]
    assert records and {r["authorExternalId"] for r in records} == {BOB["id"]}
    assert {r["authorDisplayName"] for r in records} == {BOB["login"]}  # what the table's author column shows
    by_login = _cli(module_installation, shop, ["review", "search", "--author", BOB["login"]])
    assert by_login.returncode == 0 and by_login.stdout.splitlines() == [f"no records match; {AUTHOR_NOTE}"]
    as_json = json.loads(_cli(module_installation, shop, ["review", "search", "--author", BOB["login"]],
                              "--json").stdout)
    assert as_json["summary"]["records"] == []  # the tool's answer as an agent gets it: no note added
    assert "authorExternalId" in AUTHOR_NOTE and "--json" in AUTHOR_NOTE
    assert _cli(module_installation, shop, ["review", "search", "no record holds this phrase"]).stdout.splitlines() \
        == ["no records match"]  # the note is for --author only


def test_the_author_option_help_says_it_takes_an_authors_id_not_a_login() -> None:
    shown = help_words("review", "search")
    assert "--author <str> One author's id, exact: a row's authorExternalId" in shown
    assert "The author's login" not in shown


def test_the_reviewer_option_help_names_only_what_the_tool_accepts(
        module_installation: Installation, shop: Path) -> None:
    shown = help_words("findings", "list")
    assert f"--reviewer <str> {', '.join(REVIEWERS[:-1])} or {REVIEWERS[-1]}, exact" in shown
    assert "(or code)" not in shown
    refused = _cli(module_installation, shop, ["findings", "list", "--reviewer", "code"])
    assert refused.returncode == 1, "the alias is the trailer grammar's, never the filter's"
    for reviewer in REVIEWERS:
        assert _cli(module_installation, shop, ["findings", "list", "--reviewer", reviewer]).returncode == 0
