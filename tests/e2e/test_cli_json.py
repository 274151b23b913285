"""Every command that prints a summary has `--json`, and every `--json` prints exactly {"command", "ok", "summary"}
(theurian/cli/json_summary.py): a walk over the whole CLI runs each one through the real console script and parses
what it prints, `ok` true exactly when it exits 0; a refusal under `--json` prints the same shape on stdout beside
its one line on stderr."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.review_ingest_support import ingest_env, new_project, small_corpus
from tests.knowledge.proposal_support import REPOSITORY, THREAD_KEY, candidate_arguments, new_shop
from tests.support import cli_app
from tests.support.daemon import free_port
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PUBLIC_REPOSITORY, load_fixture
from tests.support.installation import Installation
from theurian.cli.json_summary import SHAPE_HELP, SUMMARY_KEYS

# Commands that print no summary, and why: each prints one thing a script reads as it is, or runs in the foreground.
NO_SUMMARY = {
    ("serve",): "the daemon in the foreground, until Ctrl-C",
    ("daemon", "logs"): "the daemon's log lines as they are",
    ("auth", "token"): "the token alone, for `$(theurian auth token)`",
}


def _leaves() -> dict[tuple[str, ...], Any]:
    found: dict[tuple[str, ...], Any] = {}

    def walk(command: Any, prefix: tuple[str, ...]) -> None:
        subs = getattr(command, "commands", None)  # typer vendors click: duck-type groups
        if subs:
            for name, sub in subs.items():
                walk(sub, (*prefix, name))
        else:
            found[prefix] = command

    walk(cli_app.command(), ())
    return found


def _json_option(command: Any) -> Any:
    return next((p for p in command.params if "--json" in getattr(p, "opts", [])), None)


def test_every_command_but_the_ones_that_print_no_summary_has_the_one_json_option() -> None:
    leaves = _leaves()
    assert set(NO_SUMMARY) <= set(leaves)
    lacking = sorted(" ".join(path) for path, command in leaves.items()
                     if path not in NO_SUMMARY and _json_option(command) is None)
    assert lacking == []
    # Each is json_summary's own option (its help names the shape), so each prints through its one helper.
    others = sorted(" ".join(path) for path, command in leaves.items()
                    if path not in NO_SUMMARY and SHAPE_HELP not in (_json_option(command).help or ""))
    assert others == []


def _assert_shape(document: Any, path: tuple[str, ...], returncode: int) -> None:
    assert tuple(document) == SUMMARY_KEYS, (path, document)
    assert document["command"] == " ".join(path), document
    assert document["ok"] is (returncode == 0), (path, returncode, document)
    assert isinstance(document["summary"], dict), path


def test_every_summary_command_run_with_json_prints_exactly_command_ok_and_summary(
        installation: Installation, tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    body = tmp_path / "body.md"
    body.write_text("Locks after reads.\n", encoding="utf-8")
    operations = tmp_path / "operations.yaml"
    operations.write_text(yaml.safe_dump([{"op": "addAlias", "alias": "lo", "itemId": shop.item_id}]),
                          encoding="utf-8")
    args = candidate_arguments(shop)
    p = ("--project", str(shop.root))
    drafted: list[str] = []
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        env = ingest_env(fake)
        synced = new_project(installation, tmp_path / "synced", PUBLIC_REPOSITORY)
        # In an order that works: each command's argument list, or a function giving it from what ran before.
        runs: list[tuple[tuple[str, ...], Callable[[], list[str]]]] = [
            (("init",), lambda: [str(fresh)]),
            (("project", "register"), lambda: [str(fresh), "--id", "fresh"]),
            (("project", "unregister"), lambda: ["fresh"]),
            (("review", "allow"), lambda: [PUBLIC_REPOSITORY, "--project", str(fresh)]),
            (("review", "ingest"), lambda: ["--max-wait", "0", "--project", str(fresh)]),
            (("review", "disallow"), lambda: [PUBLIC_REPOSITORY, "--project", str(fresh)]),
            (("review", "status"), lambda: [*p]),
            (("review", "build"), lambda: [*p]),
            (("review", "scan"), lambda: [*p]),
            (("review", "export"), lambda: ["--parquet", str(tmp_path / "export"), *p]),
            (("review", "search"), lambda: ["comment", *p]),
            (("review", "similar"), lambda: ["take the lock after the reads", *p]),
            (("review", "concerns"), lambda: [*p]),
            (("findings", "build"), lambda: [*p]),
            (("findings", "list"), lambda: [*p]),
            (("migrate", "validate"), lambda: [*p]),
            (("migrate", "apply"), lambda: [*p]),
            (("migrate", "status"), lambda: [*p]),
            (("index", "build"), lambda: [*p]),
            (("index", "status"), lambda: [*p]),
            (("knowledge", "search"), lambda: ["lock order", *p]),
            (("project", "list"), list),
            (("project", "status"), list),
            (("propose", "change"), lambda: [shop.item_id, "--expected-revision", shop.revision_id, "--body-file",
                                             str(body), "--author", "me", *p]),
            (("propose", "migration"), lambda: ["--operations-file", str(operations), "--author", "me",
                                                "--description", "Alias the lock order", *p]),
            (("propose", "candidate"), lambda: [
                "--repository", REPOSITORY, "--record-key", THREAD_KEY, "--fix-commit", shop.fix_commit,
                "--item-id", args["itemId"], "--title", args["title"], "--body-file", str(body), "--kind",
                "convention", "--category", "reliability-rule", "--owner", "orders-team", "--author", "me",
                "--evidence", "the thread asked for it", *p]),
            (("propose", "list"), lambda: [*p]),
            (("propose", "reject"), lambda: [drafted[1], *p]),
            (("propose", "accept"), lambda: [drafted[0], *p]),
            (("daemon", "start"), lambda: ["--port", str(free_port())]),
            (("daemon", "status"), list),
            (("daemon", "stop"), list),
            (("doctor",), list),
            (("sync",), lambda: ["--max-wait", "0", "--project", str(synced)]),
            (("auth", "rotate"), list),
            (("setup",), lambda: ["--dry-run", "--service", "systemd"]),
            (("uninstall",), lambda: ["--dry-run", "--service", "systemd"]),
        ]
        leaves = _leaves()
        assert sorted(path for path, _ in runs) == sorted(set(leaves) - set(NO_SUMMARY))  # the walk misses none
        for path, arguments in runs:
            result = installation.cli(*path, *arguments(), "--json", extra_env=env, timeout=180)
            # doctor exits 1 when a check fails (here: no GitHub token check, a daemon stopped): it still reports.
            assert result.returncode == 0 or path == ("doctor",), (path, result.stderr)
            document = json.loads(result.stdout)
            _assert_shape(document, path, result.returncode)
            assert "error" not in document["summary"], (path, document)
            if path[0] == "propose" and path[1] in ("change", "migration"):
                drafted.append(document["summary"]["proposalId"])
            if path == ("doctor",):  # its failing checks are what make it exit 1
                assert document["ok"] is False and any(
                    c["level"] == "fail" for c in document["summary"]["checks"]), document


def test_a_set_up_step_that_finds_its_work_done_is_ok_and_says_nothing_changed(
        installation: Installation, tmp_path: Path) -> None:
    project = tmp_path / "again"
    project.mkdir()
    installation.cli_in_process("init", str(project))
    again = json.loads(installation.cli("init", str(project), "--json", check=True).stdout)
    assert again["ok"] is True and again["summary"]["changed"] is False and again["summary"]["message"]
    installation.cli_in_process("review", "allow", "acme/widgets", "--project", str(project))
    allowed = json.loads(installation.cli("review", "allow", "Acme/Widgets", "--project", str(project), "--json",
                                          check=True).stdout)
    assert allowed == {"command": "review allow", "ok": True,
                       "summary": {"repository": "Acme/Widgets", "changed": False,
                                   "message": allowed["summary"]["message"]}}


def _refused(installation: Installation, *arguments: str) -> tuple[int, dict[str, Any]]:
    """A refused command's exit code and the document it printed; its one stderr line says what the document
    says."""
    result = installation.cli(*arguments, "--json")
    (line,) = result.stderr.splitlines()
    document = json.loads(result.stdout)
    assert document["summary"]["error"] == line.removeprefix("theurian: "), (line, document)
    assert document["summary"]["exitCode"] == result.returncode != 0
    return result.returncode, document


def test_a_refusal_under_json_prints_the_same_shape_on_stdout_beside_its_one_stderr_line(
        installation: Installation, tmp_path: Path) -> None:
    project = tmp_path / "empty"
    project.mkdir()
    installation.cli_in_process("init", str(project))
    code, document = _refused(installation, "review", "ingest", "--project", str(project))
    assert code == 2 and document["command"] == "review ingest" and document["ok"] is False
    assert document["summary"]["error"].startswith("the review allowlist is empty")
    code, document = _refused(installation, "review", "search", "lock", "--project", str(project))
    assert code == 1 and document["command"] == "review search" and document["ok"] is False
    assert "is not registered" in document["summary"]["error"]
    code, document = _refused(installation, "daemon", "start", "--foreground", "--port", str(free_port()))
    assert code == 2 and document["summary"]["error"].startswith("--foreground serves until Ctrl-C")


def test_a_command_line_click_cannot_parse_prints_no_document(installation: Installation, tmp_path: Path) -> None:
    result = installation.cli("review", "build", "--jobs", "0", "--project", str(tmp_path), "--json")
    assert result.returncode == 2 and result.stdout == "" and "--jobs" in result.stderr


def test_setup_client_with_json_prints_the_client_line_in_the_summary(installation: Installation) -> None:
    result = installation.cli("setup", "--client", "claude-code", "--port", "7777", "--json", check=True)
    document = json.loads(result.stdout)
    _assert_shape(document, ("setup",), result.returncode)
    plain = installation.cli("setup", "--client", "claude-code", "--port", "7777", check=True).stdout
    assert document["summary"] == {"client": "claude-code", "mcpUrl": "http://127.0.0.1:7777/mcp",
                                   "line": plain.rstrip("\n"), "addressFrom": "option"}
