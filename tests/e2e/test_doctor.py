"""`theurian doctor` through the real CLI: every check green on the demo project with its daemon running, and
each broken state a test can make named, with its cure."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.daemon import managed_start
from tests.support.demo_build import shared_demo
from tests.support.installation import Installation
from theurian import registry
from theurian.embedding import MODEL_MANIFEST
from theurian.installation import INSTALLATION_CONFIG_NAME
from theurian.text import shell_word


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`make demo`'s folder, built once per session (its daemon stopped; tests/e2e/test_demo.py checks the same
    run): an installation and a fully built sample project. Tests break a copy, never this."""
    run = shared_demo(tmp_path_factory)
    assert run.returncode == 0, run.output
    return run.folder


@pytest.fixture
def copy(demo: Path, tmp_path: Path) -> tuple[Installation, Path]:
    """A copy of the demo (installation and project) to break, its registration pointing at the copy."""
    shutil.copytree(demo, tmp_path / "demo", symlinks=True)
    installation = Installation(tmp_path / "demo" / "installation")
    project = tmp_path / "demo" / "sample-project"
    with installation.in_process():  # two process starts per test saved; `project register` has its own tests
        registry.unregister("sample")
        registry.register(project, "sample")
    return installation, project


@pytest.fixture
def running(copy: tuple[Installation, Path]) -> Iterator[tuple[Installation, Path]]:
    installation, _ = copy
    started, _ = managed_start(installation)
    assert started.returncode == 0, started.stderr
    try:
        yield copy
    finally:
        installation.cli("daemon", "stop", timeout=60)


def _doctor(installation: Installation, *args: str) -> tuple[int, dict[str, dict[str, str]]]:
    result = installation.cli("doctor", "--json", *args, timeout=120)
    document = json.loads(result.stdout)
    assert document["ok"] is (result.returncode == 0)
    return result.returncode, {c["check"]: c for c in document["summary"]["checks"]}


def test_every_check_passes_on_the_demo_project_with_its_daemon_running(running: tuple[Installation, Path]) -> None:
    installation, _ = running
    code, checks = _doctor(installation)
    assert code == 0
    assert {name for name, c in checks.items() if c["level"] != "ok"} == {"github token"}  # a warning only
    for name in ("python", "git", "project registry", "access token", "daemon", "daemon accepts the token",
                 "sample: review store", "sample: findings store", "sample: knowledge state",
                 "sample: retrieval index", "sample: .theurian/state/ writable", "sample: evidence lake",
                 "sample: review salt", "embedding model"):
        assert checks[name]["level"] == "ok", checks[name]
    table = installation.cli("doctor").stdout
    assert table.rstrip().endswith("every check passed") and "FAIL" not in table


def _newer_run(project: Path) -> None:
    runs = project / ".theurian/review/runs"
    manifest = json.loads(next(runs.iterdir()).read_text(encoding="utf-8"))
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat(timespec="seconds").replace("+00:00", "Z")
    manifest["finishedAt"] = later
    (runs / next(runs.iterdir()).name).write_text(json.dumps(manifest), encoding="utf-8")


def _new_commit(project: Path) -> None:
    # Dated before the build: the store is stale because HEAD names another commit, whenever it was made.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2020-01-01T00:00:00Z"}
    subprocess.run(["git", "-C", str(project), "commit", "--allow-empty", "-q", "-m", "later"], env=env, check=True)


def _edit_applied_migration(project: Path) -> None:
    migration = sorted((project / ".theurian/migrations").iterdir())[0]
    migration.write_text(migration.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")


def _edit_state_with_sqlite3(project: Path) -> None:
    state = project / ".theurian/state"
    pointer = json.loads((state / "knowledge-active.json").read_text(encoding="utf-8"))
    with contextlib.closing(sqlite3.connect(state / pointer["stateFile"])) as connection, connection:
        connection.execute("UPDATE revisions SET body = 'Planted.'")


def _lake_record(project: Path) -> Path:
    return sorted((project / ".theurian/review").glob("sha256-*/review-thread/*.json"))[0]


def _delete_lake_record(project: Path) -> None:
    """The documented cure for a leaked record's first half: its evidence file deleted (docs/secrets.md)."""
    _lake_record(project).rename(project / "deleted-record.json")


def _edit_lake_record_in_place(project: Path) -> None:
    record = _lake_record(project)
    with record.open("a", encoding="utf-8") as file:  # the same inode: only the file's own times move
        file.write("\n")


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:50])


def _link_kind_folder_out_of_the_lake(project: Path) -> None:
    """A kind folder swapped for a link out of the lake, its repository folder's mtime set back: only the listing
    finds it, and a build would refuse that lake."""
    kind = _lake_record(project).parent
    repository = kind.parent
    mtime = repository.stat().st_mtime_ns
    kind.rename(project / "outside-kind")
    kind.symlink_to(project / "outside-kind")
    os.utime(repository, ns=(mtime, mtime))


def _damage_index_file(project: Path) -> None:
    """As `dd if=/dev/urandom of=$INDEX bs=1 count=2000 seek=100 conv=notrunc` (a fixed pattern, not random)."""
    [index] = (project / ".theurian/state").glob("knowledge-index-*.sqlite")
    with index.open("r+b") as file:
        file.seek(100)
        file.write(bytes(range(256)) * 7 + bytes(208))


def _damage_index_deep(project: Path) -> None:
    """The same pattern at byte 40,000: pages neither `open_index`'s probe nor the postings read, which a search
    still reads (as `dd … seek=40000` did to the sample project's 64 KiB index)."""
    [index] = (project / ".theurian/state").glob("knowledge-index-*.sqlite")
    with index.open("r+b") as file:
        file.seek(40_000)
        file.write(bytes(range(256)) * 7 + bytes(208))


def _alter_index_postings(project: Path) -> None:
    """Damage `open_index`'s probe does not read: the postings no longer match the digest the pointer records."""
    [index] = (project / ".theurian/state").glob("knowledge-index-*.sqlite")
    with contextlib.closing(sqlite3.connect(index)) as connection, connection:
        connection.execute("UPDATE word_postings SET data = X'00' WHERE id = 1")


def _chmod(path: str, mode: int) -> Callable[[Installation, Path], None]:
    return lambda installation, project: (installation.home / path).chmod(mode)


BROKEN: dict[str, tuple[Callable[[Installation, Path], None], str, str, str]] = {
    # what is broken: (how, the check that fails, what it says, its cure: PROJECT the project's root, one shell word)
    "review store removed": (lambda i, p: (p / ".theurian/state/review-store.duckdb").unlink(),
                             "sample: review store", "not servable (absent)",
                             "`theurian review build --project PROJECT`"),
    "an ingest since the build": (lambda i, p: _newer_run(p), "sample: review store", "1 ingest run(s) since",
                                  "`theurian review build --project PROJECT`"),
    "a lake record deleted since the build": (lambda i, p: _delete_lake_record(p), "sample: review store",
                                              "a record was added, removed or renamed in .theurian/review/sha256-",
                                              "`theurian review build --project PROJECT`"),
    "a lake record edited in place since the build": (lambda i, p: _edit_lake_record_in_place(p),
                                                      "sample: review store", "was changed since: not current",
                                                      "`theurian review build --project PROJECT`"),
    # Damage the store row cannot show once a build has skipped it: the lake row names the file and its mend.
    "a lake record truncated": (lambda i, p: _truncate(_lake_record(p)), "sample: evidence lake",
                                "1 damaged file(s): .theurian/review/sha256-",
                                "`theurian review ingest --full Acme/"),
    "a lake record edited in place, still valid": (lambda i, p: _edit_lake_record_in_place(p), "sample: evidence lake",
                                                   "edited since the newest run listing it wrote it",
                                                   "`theurian review ingest --full Acme/"),
    "a run manifest truncated": (lambda i, p: _truncate(sorted((p / ".theurian/review/runs").iterdir())[0]),
                                 "sample: evidence lake", "damaged file(s): .theurian/review/runs/", "`rm "),
    "a kind folder linked out of the lake": (lambda i, p: _link_kind_folder_out_of_the_lake(p),
                                             "sample: review store", "the lake cannot be listed to compare (",
                                             "`theurian review build --project PROJECT` names what is wrong"),
    "a commit since the findings build": (lambda i, p: _new_commit(p), "sample: findings store",
                                          "HEAD names another commit than the one",
                                          "`theurian findings build --project PROJECT`"),
    # A repository with no commit yet is still one: `findings build` builds its (empty) store there.
    "a repository with no commit and no findings store": (
        lambda i, p: (shutil.rmtree(p / ".git"), subprocess.run(["git", "init", "-q", str(p)], check=True),
                      (p / ".theurian/state/theurian-findings-local.sqlite").unlink()),
        "sample: findings store", "not servable (absent)", "`theurian findings build --project PROJECT`"),
    "findings store removed": (lambda i, p: (p / ".theurian/state/theurian-findings-local.sqlite").unlink(),
                               "sample: findings store", "not servable (absent)",
                               "`theurian findings build --project PROJECT`"),
    "an applied migration edited": (lambda i, p: _edit_applied_migration(p), "sample: knowledge state",
                                    "MIGRATION_CHECKSUM_MISMATCH", "restore the applied file as it was"),
    "knowledge state removed": (lambda i, p: (p / ".theurian/state/knowledge-active.json").unlink(),
                                "sample: knowledge state", "2 migration(s) pending",
                                "`theurian migrate apply --project PROJECT`"),
    # Not only "1 migration(s) pending" with `migrate apply` as the cure: that apply would refuse the file.
    "a pending migration apply would refuse": (
        lambda i, p: (p / ".theurian/migrations/01K1Z0000000000000000000M9-bad.yaml").write_text(
            "id: 01K1Z0000000000000000000M9\noperations:\n  - op: frobnicate\n", encoding="utf-8"),
        "sample: knowledge state", "1 migration(s) pending, which `migrate apply` would refuse: migration "
        "01K1Z0000000000000000000M9-bad.yaml is invalid",
        "correct that migration (`theurian migrate validate --project PROJECT` checks them all), then "
        "`theurian migrate apply --project PROJECT`"),
    # Not "N migration(s) pending": every migration was applied, into a state this installation cannot vouch for.
    "knowledge state edited with sqlite3": (lambda i, p: _edit_state_with_sqlite3(p), "sample: knowledge state",
                                            "not this installation's build, or is damaged",
                                            "`theurian migrate apply --project PROJECT` (rebuilds it"),
    "index removed": (lambda i, p: (p / ".theurian/state/knowledge-index.json").unlink(),
                      "sample: retrieval index", "not built", "`theurian index build --project PROJECT`"),
    "index file damaged": (lambda i, p: _damage_index_file(p), "sample: retrieval index", ": unreadable (damaged",
                           "`theurian index build --project PROJECT`"),
    "index postings altered": (lambda i, p: _alter_index_postings(p), "sample: retrieval index",
                               ": unreadable (damaged", "`theurian index build --project PROJECT`"),
    "lake removed": (lambda i, p: shutil.rmtree(p / ".theurian/review"), "sample: evidence lake", "empty",
                     "`theurian review ingest --project PROJECT`"),
    "allowlist unreadable": (lambda i, p: (p / ".theurian/config.toml").write_text("[review\n", encoding="utf-8"),
                             "sample: allowlist", "not valid TOML", "fix .theurian/config.toml"),
    # Said before: every row ok, while sync failed three of its five stages on the value.
    "content policy unusable": (lambda i, p: _set_review_value(p, 'secrets = "nope"'), "sample: content policy",
                                '[review] secrets must be one of "redact"', "fix the [review] value the message names"),
    "state folder is a file": (lambda i, p: (shutil.rmtree(p / ".theurian/state"),
                                             (p / ".theurian/state").write_text("", encoding="utf-8")),
                               "sample: .theurian/state/ writable", "", "make"),
    "project root gone": (lambda i, p: shutil.rmtree(p), "sample: root", "does not exist",
                          "if the project moved, `theurian project register NEW_PATH --id sample`"),
    "token readable by others": (_chmod("state/mcp-token", 0o644), "access token", "others can read it",
                                 "`chmod 600 "),
    "secret readable by others": (_chmod("state/build-stamp.key", 0o640), "build-stamp secret", "others can read it",
                                  "`chmod 600 "),
    "token damaged": (lambda i, p: (i.home / "state/mcp-token").write_text("x\n", encoding="utf-8"), "access token",
                      "is damaged", "`theurian auth rotate`"),
    "daemon not running": (lambda i, p: None, "daemon", "not running", "`theurian daemon start`"),
}


def test_doctor_reports_a_token_deleted_while_the_daemon_serves_and_never_writes_a_new_one(
        running: tuple[Installation, Path]) -> None:
    installation, _ = running
    token = installation.home / "state/mcp-token"
    token.unlink()  # a revocation (docs/daemon.md): the daemon accepts no token until `auth rotate` writes one
    code, checks = _doctor(installation)
    assert code == 1
    assert checks["access token"]["level"] == "fail" and "deleted" in checks["access token"]["state"]
    accepts = checks["daemon accepts the token"]
    assert accepts["level"] == "fail" and "absent" in accepts["state"], accepts
    assert accepts["cure"].startswith("`theurian auth rotate`")
    assert not token.exists()  # doctor read; it did not undo the revocation
    assert _doctor(installation)[1]["daemon accepts the token"]["level"] == "fail"  # and the next run says so too


def _set_review_value(project: Path, line: str) -> None:
    config = project / ".theurian/config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("[review]\n", f"[review]\n{line}\n"),
                      encoding="utf-8")


@pytest.mark.parametrize("broken", list(BROKEN))
def test_each_broken_state_fails_its_check_and_names_the_cure(copy: tuple[Installation, Path], broken: str) -> None:
    installation, project = copy
    damage, name, state, cure = BROKEN[broken]
    damage(installation, project)
    code, checks = _doctor(installation)
    assert code == 1
    assert checks[name]["level"] == "fail", checks[name]
    cure = cure.replace("PROJECT", shell_word(str(project)))
    assert state in checks[name]["state"] and checks[name]["cure"].startswith(cure), checks[name]


def test_a_record_a_build_skipped_or_one_edited_before_the_build_still_fails_the_lake_row_with_its_cure(
        copy: tuple[Installation, Path]) -> None:
    installation, project = copy
    truncated, edited = sorted((project / ".theurian/review").glob("sha256-*/review-thread/*.json"))[:2]
    _truncate(truncated)
    edited.write_bytes(edited.read_bytes() + b"\n")
    built = installation.cli("review", "build", "--project", str(project), check=True, timeout=300).stderr
    assert f"note: `theurian review status --project {project}` names the command that mends each skipped file" in built
    code, checks = _doctor(installation)
    lake, store = checks["sample: evidence lake"], checks["sample: review store"]
    assert code == 1 and store["level"] == "ok", store  # the store is current with the lake: only the lake row sees it
    assert lake["level"] == "fail" and "2 damaged file(s): " in lake["state"], lake
    # doctor runs from anywhere: the command that names each file names the project
    assert lake["state"].endswith(f" and 1 more (`theurian review status --project {project}` names each)"), lake
    assert lake["cure"].startswith("`theurian review ingest --full Acme/"), lake
    assert f"--project {project}`" in lake["cure"]
    status = installation.cli("review", "status", "--project", str(project), check=True).stdout
    relative = truncated.relative_to(project)
    assert f"damaged: {relative}: unreadable: JSONDecodeError -> `theurian review ingest --full Acme/" in status
    assert f"damaged: {edited.relative_to(project)}: edited since the newest run listing it wrote it" in status
    document = json.loads(installation.cli("review", "status", "--json", "--project", str(project),
                                           check=True).stdout)
    assert [entry["path"] for entry in document["summary"]["damagedEntries"]] == sorted(
        [str(relative), str(edited.relative_to(project))])
    # project status names each one as review status does, from doctor's lake row (judged by the store's hashes)
    text = installation.cli("project", "status", "sample", check=True).stdout
    damaged = [line.removeprefix("  ") for line in text.splitlines() if line.startswith("  damaged: ")]
    assert damaged == [line for line in status.splitlines() if line.startswith("damaged: ")] and len(damaged) == 2
    [listed] = json.loads(installation.cli("project", "status", "sample", "--json", check=True).stdout)[
        "summary"]["projects"]
    assert listed["damagedEntries"] == document["summary"]["damagedEntries"]


def test_a_model_folder_without_its_manifest_fails_its_own_row_and_the_store_row_cures_the_config_not_a_build(
        copy: tuple[Installation, Path]) -> None:
    installation, project = copy
    (installation.home / "config/models/my-static-model").mkdir(parents=True)
    config = installation.home / "config" / INSTALLATION_CONFIG_NAME
    config.write_text('embedding_model = "models/my-static-model"\n', encoding="utf-8")
    code, checks = _doctor(installation)
    assert code == 1
    model, store = checks["embedding model"], checks["sample: review store"]
    assert model["level"] == "fail" and model["state"].endswith(f"is not a model folder: it has no {MODEL_MANIFEST}")
    assert model["cure"].startswith(f"fix `embedding_model` in {config} or the model folder it names")
    assert store["level"] == "fail" and f"it has no {MODEL_MANIFEST}" in store["state"]
    assert store["cure"] == f"{model['cure']}; then `theurian review build --project {project}`"
    built = installation.cli("review", "build", "--project", str(project), timeout=120)
    assert built.returncode == 1 and MODEL_MANIFEST in built.stderr  # why the build alone is no cure
    config.unlink()  # the cure the rows name: the bundled model again, and the store it built is served
    code, checks = _doctor(installation)
    assert checks["embedding model"]["level"] == checks["sample: review store"]["level"] == "ok", checks


def test_an_installation_config_every_row_reads_is_named_once_and_the_rows_it_stopped_cure_it(
        copy: tuple[Installation, Path]) -> None:
    """Said before: the model row, each review store and each knowledge state repeated the config's fault, the
    store rows with a model's cure and a rebuild, the knowledge rows with no cure at all."""
    installation, project = copy
    config = installation.home / "config" / INSTALLATION_CONFIG_NAME
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('api_url = "x"\n', encoding="utf-8")
    (project / ".theurian/state/theurian-findings-local.sqlite").unlink()  # a fault of its own
    code, checks = _doctor(installation)
    assert code == 1
    cause = checks["installation config"]
    assert cause["level"] == "fail" and "unknown key 'api_url'" in cause["state"] and cause["cure"] == f"fix {config}"
    stopped = ["embedding model", "sample: review store", "sample: knowledge state", "github app"]
    for name in stopped:
        assert checks[name] == {"check": name, "level": "fail", "state": "not checked: the installation config is "
                                "refused (its row above)", "cure": f"fix {config}"}, checks[name]
    assert [name for name, c in checks.items() if "api_url" in c["state"]] == ["installation config"]
    assert checks["sample: findings store"]["state"] == "not servable (absent)"  # its own fault, its own cure
    status = installation.cli("project", "status", "sample", check=True).stdout
    assert (f"  review store: not checked: the installation config is refused: {cause['state']}  [fail] -> fix "
            f"{config}" in status.splitlines()), status


def test_an_allowlisted_repository_with_no_run_at_all_is_a_warning_naming_the_ingest_that_says_why(
        copy: tuple[Installation, Path]) -> None:
    """An ingest that fails before it has shown a repository public writes no run: every row was ok after it."""
    installation, project = copy
    _, before = _doctor(installation)
    assert before["sample: allowlist"]["level"] == "ok", before["sample: allowlist"]
    installation.cli_in_process("review", "allow", "Acme/Nothing", "--project", str(project))
    _, checks = _doctor(installation)
    row = checks["sample: allowlist"]
    assert (row["level"], row["cure"]) == ("warn", f"`theurian review ingest Acme/Nothing --project {project}` says "
                                                   "why")
    assert row["state"].endswith("; Acme/Nothing never ingested (an ingest that failed before its first page leaves "
                                 "no run)"), row
    assert {name for name, c in checks.items() if c["level"] == "fail"} == {
        name for name, c in before.items() if c["level"] == "fail"}  # a warning: the exit code is not moved by it


def test_online_asks_the_github_api_for_its_rate_budget(copy: tuple[Installation, Path]) -> None:
    from tests.support.fake_github import FakeGitHub
    from tests.support.github_corpus import load_fixture

    installation, _ = copy
    with FakeGitHub(load_fixture()).running() as fake:
        env = {"GITHUB_TOKEN": "test-token", "GITHUB_API_URL": fake.url}
        result = installation.cli("doctor", "--json", "--online", extra_env=env, timeout=120)
    checks = {c["check"]: c for c in json.loads(result.stdout)["summary"]["checks"]}
    assert checks["github token"] == {"check": "github token", "level": "ok",
                                      "state": "GITHUB_TOKEN is set (not shown)", "cure": ""}
    assert checks["github api"]["level"] == "ok" and "points left" in checks["github api"]["state"]
    assert "test-token" not in result.stdout
    offline = installation.cli("doctor", "--json", "--online", timeout=120)
    github = {c["check"]: c for c in json.loads(offline.stdout)["summary"]["checks"]}["github token"]
    assert github["level"] == "fail" and github["cure"].startswith("export GITHUB_TOKEN")


def test_a_run_manifest_time_without_an_offset_fails_the_store_row_of_doctor_and_status_never_a_traceback(
        copy: tuple[Installation, Path]) -> None:
    """The manifest schema's `format: date-time` is only an annotation: "2026-01-01" validates, and was read as a
    naive time that crashed the comparison with the store's aware build time."""
    installation, project = copy
    path = next((project / ".theurian/review/runs").iterdir())
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["finishedAt"] = "2026-01-01"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    code, checks = _doctor(installation)
    store = checks["sample: review store"]
    assert code == 1 and store["level"] == "fail"
    assert store["state"] == (f"not judged: run {manifest['runId']}'s finishedAt '2026-01-01' is not an RFC 3339 "
                              "timestamp with an explicit offset, so whether the store is older than that run is "
                              "unknown")
    assert store["cure"].endswith(f".theurian/review/runs/{path.name}, or remove that file")
    status = installation.cli("project", "status", "sample")
    assert status.returncode == 0 and status.stderr == ""
    assert "review store: not judged: run " in status.stdout and "[fail] -> write a full timestamp" in status.stdout


# The status commands read the same checks: `project status`, `index status`, `migrate validate`.

def test_project_status_shows_the_lake_by_repository_and_kind_the_last_ingest_and_each_store(
        copy: tuple[Installation, Path]) -> None:
    installation, project = copy
    result = installation.cli("project", "status", "sample", "--json", check=True)
    [document] = json.loads(result.stdout)["summary"]["projects"]
    # The demo ingests two repositories: Acme/Widgets and the paraphrase set review.findSimilar is shown on.
    by_name = {r["repository"]: r for r in document["repositories"]}
    assert sorted(by_name) == ["Acme/Reviews", "Acme/Widgets"]
    repository = by_name["Acme/Widgets"]
    assert repository["records"] == {"pull-request": 105, "review-submission": 134, "review-thread": 237}
    assert repository["lastIngest"]["status"] == "completed" and repository["lastIngest"]["window"]["until"]
    assert {name: check["level"] for name, check in document["state"].items()} == dict.fromkeys(
        ["root", ".theurian/state/ writable", "allowlist", "content policy", "evidence lake", "review store",
         "review salt", "findings store", "knowledge state", "retrieval index"], "ok")
    assert document["proposals"] == {}
    _newer_run(project)
    text = installation.cli("project", "status", check=True).stdout
    assert "review store: built" in text
    assert f"1 ingest run(s) since  [fail] -> `theurian review build --project {project}`" in text
    unknown = installation.cli("project", "status", "nope")
    assert unknown.returncode == 1 and unknown.stderr == "theurian: no project is registered under id 'nope'\n"


def test_index_status_tells_current_stale_and_not_built_apart(copy: tuple[Installation, Path]) -> None:
    installation, project = copy
    args = ("index", "status", "--project", str(project), "--json")
    assert json.loads(installation.cli(*args, check=True).stdout)["summary"]["state"] == "current"
    pointer = project / ".theurian/state/knowledge-index.json"
    document = json.loads(pointer.read_text(encoding="utf-8"))
    pointer.write_text(json.dumps(document | {"stateHash": "0" * 64}), encoding="utf-8")
    result = installation.cli(*args)
    stale = json.loads(result.stdout)
    assert result.returncode == 1 and stale["ok"] is False  # knowledge.search would not rank with it
    assert stale["summary"]["state"] == "stale" and stale["summary"]["indexedState"] == "0" * 64
    pointer.unlink()
    result = installation.cli("index", "status", "--project", str(project))
    assert result.returncode == 1 and result.stdout.strip() == f"not built (`theurian index build --project {project}`)"


def _search_fallback(installation: Installation, project: Path) -> str | None:
    result = installation.cli("knowledge", "search", "auth", "--project", str(project), "--json", check=True)
    reason: str | None = json.loads(result.stdout)["summary"]["retrieval"]["fallbackReason"]
    return reason


@pytest.mark.parametrize("damage", [_damage_index_file, _damage_index_deep, _alter_index_postings])
def test_index_status_calls_an_index_unreadable_exactly_when_knowledge_search_falls_back_for_it(
        copy: tuple[Installation, Path], damage: Callable[[Path], None]) -> None:
    installation, project = copy
    assert _search_fallback(installation, project) is None
    damage(project)
    assert _search_fallback(installation, project) == "index-unreadable"
    result = installation.cli("index", "status", "--project", str(project), "--json")
    document = json.loads(result.stdout)
    assert result.returncode == 1 and document["ok"] is False and document["summary"]["state"] == "unreadable"
    text = installation.cli("index", "status", "--project", str(project))
    assert text.returncode == 1 and ": unreadable (damaged, or not the build its pointer names: " in text.stdout
    assert text.stdout.rstrip().endswith(
        f"); knowledge.search falls back to substring search (`theurian index build --project {project}`)")
    [status] = json.loads(installation.cli("project", "status", "sample", "--json").stdout)["summary"]["projects"]
    assert status["state"]["retrieval index"]["level"] == "fail"
    installation.cli("index", "build", "--project", str(project), check=True, timeout=300)
    assert _search_fallback(installation, project) is None
    assert installation.cli("index", "status", "--project", str(project)).stdout.rstrip().endswith(": current")


def _review_store_row(installation: Installation) -> dict[str, str]:
    [document] = json.loads(installation.cli("project", "status", "sample", "--json").stdout)["summary"]["projects"]
    row: dict[str, str] = document["state"]["review store"]
    return row


def test_project_status_calls_the_review_store_stale_once_a_lake_record_is_deleted_until_a_rebuild(
        copy: tuple[Installation, Path]) -> None:
    installation, project = copy
    assert _review_store_row(installation)["level"] == "ok"
    _delete_lake_record(project)
    row = _review_store_row(installation)
    assert row["level"] == "fail" and row["cure"] == f"`theurian review build --project {project}`"
    assert "a record was added, removed or renamed in .theurian/review/sha256-" in row["state"]
    installation.cli("review", "build", "--project", str(project), check=True, timeout=300)
    row = _review_store_row(installation)
    assert row["level"] == "ok" and row["state"].endswith("current with the lake")
    _edit_lake_record_in_place(project)
    assert "was changed since: not current with the lake" in _review_store_row(installation)["state"]


def test_project_status_names_a_review_store_with_no_lake_behind_it(copy: tuple[Installation, Path]) -> None:
    installation, project = copy
    for folder in (project / ".theurian/review").glob("sha256-*"):
        shutil.rmtree(folder)  # the lake gone, the store built from it kept (or a store copied from elsewhere)
    row = _review_store_row(installation)
    assert row["level"] == "fail" and row["state"].startswith("built from a lake that is no longer here")
    assert row["cure"].startswith(f"`theurian review build --project {project}`")
    text = installation.cli("project", "status", "sample").stdout
    assert "  review store: built from a lake that is no longer here" in text
    installation.cli("review", "build", "--project", str(project), check=True, timeout=300)
    assert _review_store_row(installation) == {"level": "ok", "state": "built here, empty like the lake", "cure": ""}


def test_migrate_validate_checks_everything_and_applies_nothing(copy: tuple[Installation, Path]) -> None:
    installation, project = copy
    state = project / ".theurian/state"
    before = sorted(p.name for p in state.iterdir())
    valid = installation.cli("migrate", "validate", "--project", str(project), check=True)
    assert valid.stdout.strip() == "2 migration(s) valid, 0 pending; nothing was applied"
    _edit_applied_migration(project)
    edited = installation.cli("migrate", "validate", "--project", str(project), "--json")
    refusal = json.loads(edited.stdout)
    assert edited.returncode == 1 and refusal["ok"] is False
    assert refusal["summary"]["code"] == "MIGRATION_CHECKSUM_MISMATCH"
    assert sorted(p.name for p in state.iterdir()) == before


def test_migrate_validate_refuses_a_body_whose_hash_does_not_match(copy: tuple[Installation, Path]) -> None:
    installation, project = copy
    body = next(p for p in sorted((project / ".theurian/knowledge").rglob("*")) if p.is_file())
    body.write_text(body.read_text(encoding="utf-8") + "changed\n", encoding="utf-8")
    result = installation.cli("migrate", "validate", "--project", str(project))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"the body ../knowledge/{body.relative_to(project / '.theurian/knowledge')} hashes to sha256:" in (
        result.stderr)
    assert "not the contentSha256 the migration records; nothing was changed" in result.stderr


def _leave_last_run_running(project: Path) -> str:
    """What a killed ingest leaves: its manifest still `running`, no finish time (its lock died with it)."""
    path = sorted((project / ".theurian/review/runs").iterdir())[-1]
    manifest = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(manifest | {"status": "running", "finishedAt": None}), encoding="utf-8")
    return str(manifest["runId"])


def test_a_run_left_running_reads_interrupted_unless_an_ingest_holds_the_lake(copy: tuple[Installation, Path]) -> None:
    from theurian.folder_lock import folder_held

    installation, project = copy
    run_id = _leave_last_run_running(project)
    text = installation.cli("review", "status", "--project", str(project), check=True).stdout
    assert f"last run {run_id} interrupted (no ingest is running) at " in text
    rows = json.loads(installation.cli("review", "status", "--project", str(project), "--json", check=True).stdout)
    [last] = [r["lastRun"] for r in rows["summary"]["repositories"] if r["lastRun"]["runId"] == run_id]
    assert last["status"] == "running" and last["interrupted"] is True  # the manifest's word, and what it means
    resume = f"theurian review ingest {last['repository']} --project {project}"
    assert last["nextStep"] == resume
    assert (f"last run {run_id} interrupted (no ingest is running) at {last['startedAt']}: it was stopped before it "
            f"finished (what it wrote is kept): `{resume}` covers its window again, then `theurian review build "
            f"--project {project}`") in text
    status = installation.cli("project", "status", check=True).stdout  # the same next step, from the same owner
    head = f"last ingest interrupted (no ingest is running) {last['startedAt']} "
    [line] = [line for line in status.splitlines() if head in line]
    assert line.endswith(f"): it was stopped before it finished (what it wrote is kept): `{resume}` covers its window "
                         f"again, then `theurian review build --project {project}`"), line
    [document] = json.loads(installation.cli("project", "status", "--json", check=True).stdout)["summary"]["projects"]
    [ingest] = [r["lastIngest"] for r in document["repositories"] if r["lastIngest"]["runId"] == run_id]
    assert (ingest["interrupted"], ingest["nextStep"]) == (True, resume)  # it said `theurian review ingest None`
    with folder_held(project / ".theurian/review", wait=False):  # the lock an ingest holds for its whole run
        held = installation.cli("review", "status", "--project", str(project), check=True).stdout
        assert f"last run {run_id} running at " in held
        assert "last ingest running " in installation.cli("project", "status").stdout
