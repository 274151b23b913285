"""`theurian sync` through the real CLI: the five stages in order, each skipped with its reason when it has nothing to
do, a failed stage reported with the exit code saying so, `--json` holding each stage's own `--json` summary, and
a Ctrl-C that stops it with exit 130."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.e2e.review_ingest_support import TOKEN, ingest_env, new_project, small_corpus
from tests.knowledge.authoring import MigrationWriter
from tests.knowledge.proposal_support import commit_touching, git
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PUBLIC_REPOSITORY, load_fixture
from tests.support.installation import THEURIAN_BIN, Installation
from theurian.cli.sync_stages import STAGES
from theurian.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE

INTERRUPT_WAIT_SECONDS = 60.0


def _sync(installation: Installation, root: Path, *args: str,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return installation.cli("sync", "--project", str(root), *args, extra_env=env)


def _stages(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    document = json.loads(result.stdout)
    assert (document["command"], document["ok"]) == ("sync", result.returncode == 0), document
    stages = document["summary"]["stages"]
    assert [stage["stage"] for stage in stages] == list(STAGES)
    return {stage["stage"]: stage for stage in stages}


def _git_project(installation: Installation, root: Path) -> Path:
    new_project(installation, root, PUBLIC_REPOSITORY)
    git(root, "init", "-q")
    commit_touching(root, "a.txt", message="first\n\nReview-Finding: security HIGH — tokens compared with ==")
    return root


def test_a_fresh_project_skips_what_has_nothing_to_do_and_says_why(installation: Installation,
                                                                   tmp_path: Path) -> None:
    root = new_project(installation, tmp_path / "p")
    result = _sync(installation, root)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split("  ")[0] for line in lines[:5]] == list(STAGES)
    assert "review ingest   skipped  the review allowlist is empty" in lines[0]
    assert "review build    skipped  the evidence lake (.theurian/review/) holds no repository yet" in lines[1]
    # Not skipped: review.findings refused a project with no findings store, naming a build that then failed.
    assert lines[2].startswith("findings build  done     built .theurian/state/theurian-findings-local.sqlite: 0 "
                               "findings from 0 commits")
    assert lines[2].endswith("; the project is not inside a git repository: no history, so no findings")
    assert lines[3].startswith("migrate apply   done     state ") and lines[4].startswith("index build     done")
    assert lines[5] == "sync: 3 done, 2 skipped, 0 failed"
    installation.cli_in_process("project", "register", str(root))
    listed = installation.cli("findings", "list", "--json", "--project", str(root))  # as an agent is answered
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert json.loads(listed.stdout)["summary"]["count"] == 0, listed.stdout
    again = _stages(_sync(installation, root, "--json"))
    assert again["migrate apply"]["outcome"] == "skipped" and "nothing pending" in again["migrate apply"]["reason"]
    assert again["index build"]["outcome"] == "skipped" and "already covers state" in again["index build"]["reason"]


def test_with_json_each_stages_name_still_goes_to_stderr_as_it_starts(installation: Installation,
                                                                        tmp_path: Path) -> None:
    root = new_project(installation, tmp_path / "p")
    installation.cli_in_process("project", "register", str(root))
    result = _sync(installation, root, "--json")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [f"sync: {name}…" for name in STAGES]
    assert _stages(result)  # stdout is still the one document


def test_a_project_no_registration_names_is_synced_and_told_how_agents_reach_it(installation: Installation,
                                                                                tmp_path: Path) -> None:
    root = new_project(installation, tmp_path / "p")  # initialised, never registered
    result = _sync(installation, root)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[-1] == (f"note: {root} is not registered, so no agent can read it: run "
                                              f"`theurian project register {root}` first")
    installation.cli_in_process("project", "register", str(root))
    assert "note:" not in _sync(installation, root).stderr


def test_an_api_url_the_ingest_would_refuse_is_a_usage_error_before_any_stage(installation: Installation,
                                                                               tmp_path: Path) -> None:
    root = new_project(installation, tmp_path / "p", PUBLIC_REPOSITORY)
    for args, env in [(("--api-url", "ftp://x"), None), ((), {"GITHUB_API_URL": "http://example.com"})]:
        result = _sync(installation, root, *args, env=env)
        assert (result.returncode, result.stdout) == (EXIT_USAGE, "")
        [line] = result.stderr.splitlines()  # no stage ran: no stage's name was printed
        assert line.startswith("theurian: ") and ("is not an http(s) URL" in line or "plain http" in line), line
    assert not (root / ".theurian/state").exists() or not any((root / ".theurian/state").iterdir())


def test_each_stage_holds_the_summary_its_own_command_prints_with_json(installation: Installation,
                                                                        tmp_path: Path) -> None:
    root = _git_project(installation, tmp_path / "p")
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        stages = _stages(_sync(installation, root, "--json", "--max-wait", "0", env=ingest_env(fake)))
        assert all(stage["outcome"] == "done" for stage in stages.values()), stages
        own = {
            "review ingest": installation.cli("review", "ingest", "--json", "--max-wait", "0", "--project",
                                              str(root), extra_env=ingest_env(fake)),
            "review build": installation.cli("review", "build", "--json", "--project", str(root)),
            "findings build": installation.cli("findings", "build", "--json", "--project", str(root)),
            "migrate apply": installation.cli("migrate", "apply", "--json", "--project", str(root)),
            "index build": installation.cli("index", "build", "--json", "--project", str(root)),
        }
    for name, result in own.items():
        assert result.returncode == 0, (name, result.stderr)
        summary = stages[name]["summary"]
        assert set(json.loads(result.stdout)["summary"]) == set(summary), name
    assert stages["review ingest"]["summary"]["runs"][0]["status"] == "completed"
    assert stages["review build"]["summary"]["records"] > 0
    assert stages["findings build"]["summary"]["findings"] == 1


def test_a_failed_stage_is_reported_the_others_still_run_and_the_exit_code_says_so(installation: Installation,
                                                                                      tmp_path: Path) -> None:
    root = _git_project(installation, tmp_path / "p")
    result = _sync(installation, root)  # no GITHUB_TOKEN: the ingest cannot start
    assert result.returncode == EXIT_FAILED
    assert "review ingest   failed   no GitHub token: set GITHUB_TOKEN or GH_TOKEN" in result.stdout
    assert "findings build  done     built " in result.stdout
    assert result.stdout.splitlines()[-1] == "sync: 3 done, 1 skipped, 1 failed"
    assert result.stderr.splitlines()[-1] == "theurian: sync: review ingest failed (see above); the other stages ran"
    assert "Traceback" not in result.stderr
    stages = _stages(_sync(installation, root, "--json"))
    assert stages["review ingest"]["outcome"] == "failed" and "no GitHub token" in stages["review ingest"]["error"]


def test_a_migrate_apply_that_fails_skips_the_index_build_naming_why(installation: Installation,
                                                                     tmp_path: Path) -> None:
    root = new_project(installation, tmp_path / "p")
    (root / ".theurian/migrations").mkdir()
    (root / ".theurian/migrations/01J00000000000000000000000-broken.yaml").write_text("not: [a migration",
                                                                                       encoding="utf-8")
    result = _sync(installation, root, "--json")
    assert result.returncode == EXIT_FAILED
    stages = _stages(result)
    assert stages["migrate apply"]["outcome"] == "failed" and stages["migrate apply"]["error"]
    assert stages["index build"]["outcome"] == "skipped"
    assert stages["index build"]["reason"].startswith("migrate apply failed")
    assert json.loads(result.stdout)["summary"]["failed"] == ["migrate apply"]


def test_ctrl_c_during_the_ingest_stops_the_sync_with_exit_130_and_runs_no_later_stage(
        installation: Installation, tmp_path: Path) -> None:
    root = _git_project(installation, tmp_path / "p")
    with FakeGitHub(small_corpus(load_fixture()), latency=0.5).running() as fake:
        process = subprocess.Popen(
            [str(THEURIAN_BIN), "sync", "--project", str(root)], env=installation.env | ingest_env(fake),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + INTERRUPT_WAIT_SECONDS
        while fake.requests == 0 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)  # bounded by the deadline: waiting for the ingest's first request to reach the fake
        assert fake.requests > 0, "the ingest never reached the fake"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=INTERRUPT_WAIT_SECONDS)
    assert process.returncode == EXIT_INTERRUPTED, err
    assert "Traceback" not in err and "sync: review build" not in err
    assert out == ""  # no summary: the sync stopped where it was
    assert not (root / ".theurian/state/review-store.duckdb").exists()
    assert TOKEN not in out + err


def test_a_state_folder_linked_out_of_the_project_fails_its_stages_with_the_cure_and_writes_nothing_there(
        installation: Installation, tmp_path: Path) -> None:
    root = new_project(installation, tmp_path / "p")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".theurian/state").symlink_to(outside)
    result = _sync(installation, root, "--json")
    assert result.returncode == EXIT_FAILED
    stages = _stages(result)
    for stage in ("review build", "migrate apply"):
        assert stages[stage]["outcome"] == "failed"
        assert stages[stage]["error"].startswith(".theurian/state resolves outside the root it must stay under. "
                                                 "Cure: remove .theurian/state"), stages[stage]
    assert list(outside.iterdir()) == []


def _limited_to(size: int) -> Callable[[], None]:
    """A child's file size limit: a write past `size` bytes fails with EFBIG (SIGXFSZ ignored, so the write fails
    rather than the process dying), as a full disk fails it with ENOSPC, at the operating system's own boundary."""
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return limit


def _limited_cli(installation: Installation, *args: str, size: int,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(THEURIAN_BIN), *args], env=installation.env | (env or {}), capture_output=True,
                          text=True, encoding="utf-8", timeout=300, preexec_fn=_limited_to(size))


# Past the lake's files (a few KiB each), short of the review store's first DuckDB checkpoint.
_STORE_TOO_LARGE = 200_000

_PAST_THE_LIMIT = ("the file would pass the file size limit (ulimit -f); raise it (`ulimit -f unlimited` in the shell "
                   "that runs theurian), then run the command again")


def test_a_stage_the_disk_fails_is_reported_on_its_line_and_the_later_stages_still_run(
        installation: Installation, tmp_path: Path) -> None:
    root = _git_project(installation, tmp_path / "p")
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        result = _limited_cli(installation, "sync", "--project", str(root), "--max-wait", "0",
                              size=_STORE_TOO_LARGE, env=ingest_env(fake))
        as_json = _limited_cli(installation, "sync", "--project", str(root), "--max-wait", "0", "--json",
                               size=_STORE_TOO_LARGE, env=ingest_env(fake))
    assert result.returncode == EXIT_FAILED, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split("  ")[0] for line in lines[:5]] == list(STAGES), result.stdout
    assert lines[0].startswith("review ingest   done     Acme/Widgets: completed")
    assert lines[1] == (f"review build    failed   cannot write review-store.duckdb in {root}/.theurian/state/: "
                        f"{_PAST_THE_LIMIT}")
    assert lines[2].startswith("findings build  done")
    assert lines[5] == "sync: 4 done, 0 skipped, 1 failed"
    assert result.stderr.splitlines()[-1] == "theurian: sync: review build failed (see above); the other stages ran"
    assert "unexpected failure" not in result.stdout + result.stderr
    assert as_json.returncode == EXIT_FAILED
    stages = _stages(as_json)
    assert stages["review build"]["outcome"] == "failed" and stages["review build"]["summary"] is None
    assert stages["review build"]["error"].endswith(_PAST_THE_LIMIT)
    assert [stages[name]["outcome"] for name in STAGES[2:]] == ["done", "skipped", "skipped"]
    assert json.loads(as_json.stdout)["summary"]["failed"] == ["review build"]
    # The failed build left no temp behind and published no store.
    assert sorted(p.name for p in (root / ".theurian/state").iterdir() if "review-store" in p.name) == []


def test_a_command_the_disk_fails_names_the_file_and_the_condition_not_an_unexpected_failure(
        installation: Installation, tmp_path: Path) -> None:
    root = _git_project(installation, tmp_path / "p")
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        installation.cli("review", "ingest", "--max-wait", "0", "--project", str(root), extra_env=ingest_env(fake),
                         check=True)
    result = _limited_cli(installation, "review", "build", "--project", str(root), size=_STORE_TOO_LARGE)
    assert result.returncode == EXIT_FAILED
    line, = result.stderr.splitlines()
    # The build's temp folder is not named (it is gone, and the operator never made it): the store and its folder are.
    assert line == f"theurian: cannot write review-store.duckdb in {root}/.theurian/state/: {_PAST_THE_LIMIT}"
    refused = _limited_cli(installation, "review", "build", "--json", "--project", str(root), size=_STORE_TOO_LARGE)
    document = json.loads(refused.stdout)
    assert (document["ok"], document["summary"]["exitCode"]) == (False, EXIT_FAILED)
    assert document["summary"]["error"] == refused.stderr.strip().removeprefix("theurian: ")


def _index_channels(installation: Installation, root: Path, *args: str) -> list[str]:
    built = installation.cli("index", "build", "--json", "--project", str(root), *args, check=True)
    channels: list[str] = json.loads(built.stdout)["summary"]["channels"]
    return channels


def test_index_build_and_syncs_index_stage_keep_a_summary_tree_alike_until_no_raptor_drops_it(
        installation: Installation, tmp_path: Path) -> None:
    root = new_project(installation, tmp_path / "p")
    writer = MigrationWriter(root)
    writer.item("arch.locks", "take the ledger lock before the account lock")
    writer.write("locks")
    installation.cli_in_process("migrate", "apply", "--project", str(root))
    assert "summary" in _index_channels(installation, root, "--raptor")
    assert "summary" in _index_channels(installation, root)  # by hand, as sync: the tree is kept
    assert "summary" not in _index_channels(installation, root, "--no-raptor")
    assert "summary" not in _index_channels(installation, root)  # and, dropped, stays dropped
    _index_channels(installation, root, "--raptor")
    later = MigrationWriter(root, depends_on=[writer.migration_id])
    later.item("arch.retries", "retry a flaky test once, never in a loop")
    later.write("retries")
    stages = _stages(_sync(installation, root, "--json"))
    assert stages["index build"]["outcome"] == "done"
    assert "summary" in stages["index build"]["summary"]["channels"]


def test_a_skipped_stage_carries_the_summary_of_what_is_in_place_in_its_commands_shape(
        installation: Installation, tmp_path: Path) -> None:
    root = new_project(installation, tmp_path / "p")
    built = _stages(_sync(installation, root, "--json"))
    again = _stages(_sync(installation, root, "--json"))
    assert [again[name]["outcome"] for name in STAGES] == ["skipped"] * 5
    for name in ("migrate apply", "index build"):
        assert again[name]["summary"] is not None, name
        assert set(again[name]["summary"]) == set(built[name]["summary"]), name
    assert again["index build"]["summary"] == built["index build"]["summary"]  # the index it kept
    assert again["migrate apply"]["summary"]["stateHash"] == built["migrate apply"]["summary"]["stateHash"]
    for name in ("review ingest", "review build", "findings build"):  # nothing in place: null
        assert again[name]["summary"] is None, name


def test_a_file_the_build_stage_skips_is_followed_by_where_its_cure_is_named_as_review_build_says(
        installation: Installation, tmp_path: Path) -> None:
    """sync printed the build's `skipped` lines alone; `review build` adds where each one's cure is named."""
    from tests.projection.review_records import copy_fixture_lake

    root = installation.new_project_in_process(tmp_path / "p")
    copy_fixture_lake(root)
    record = sorted((root / ".theurian/review").glob("sha256-*/review-thread/*.json"))[0]
    record.write_bytes(record.read_bytes()[:20])  # truncated: the build skips it
    result = _sync(installation, root)
    assert result.returncode == 0, result.stderr
    note = f"note: `theurian review status --project {root}` names the command that mends each skipped file"
    build = installation.cli("review", "build", "--project", str(root), check=True)
    assert build.stderr == note + "\n"  # the one owner of the note, printed by both
    lines = result.stdout.splitlines()
    head = lines.index(next(line for line in lines if line.startswith("review build    done     skipped ")))
    built = next(i for i, line in enumerate(lines) if i > head and line.lstrip().startswith("built "))
    assert lines[built + 1] != note and lines[built + 1].lstrip() == note  # under the stage's line, indented
