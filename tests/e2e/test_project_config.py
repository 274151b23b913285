"""A project's `.theurian/config.toml` holds only tables and keys some module reads: a misspelt key or table is
refused, in one line naming it and the known ones, by every command that reads the file (before any request) and
by the daemon's tools that read it, and every key the docs name is still accepted."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from evidence.content_policy import PROJECT_CONFIG_KEYS, project_salt
from tests.e2e.review_ingest_support import ingest, ingest_env, record_files, small_corpus
from tests.knowledge.proposal_support import PROJECT_ID, new_shop, proposals
from tests.projection.review_records import copy_fixture_lake
from tests.support.daemon import running_daemon
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import PUBLIC_REPOSITORY, load_fixture
from tests.support.installation import Installation
from tests.support.mcp_client import call_tools
from theurian.project import INITIAL_CONFIG

KEYS = "acknowledged_secrets, allowlist, redact_participants, secrets"
ALLOW = f'allowlist = ["{PUBLIC_REPOSITORY}"]\n'
PREFIX = "theurian: .theurian/config.toml: "
MISSPELT = {
    "redact_participant": (f"[review]\n{ALLOW}redact_participant = true\n",
                           f"unknown key 'redact_participant' in [review]; the keys are: {KEYS}"),
    "secret": (f'[review]\n{ALLOW}secret = "block"\n', f"unknown key 'secret' in [review]; the keys are: {KEYS}"),
    "reveiw": (f"[reveiw]\n{ALLOW}", "unknown table [reveiw]; the tables are: [review]"),
    "second table": (f'[review]\n{ALLOW}[daemon]\nport = 1\n', "unknown table [daemon]; the tables are: [review]"),
    "not a table": ("review = 3\n", "review must be a table ([review]); edit it by hand"),
}
# Each command that reads the project config, as its arguments before `--project`.
READERS = {
    "review ingest": ("review", "ingest", "--max-wait", "0"),
    "review scan": ("review", "scan"),
    "review status": ("review", "status"),
    "review allow": ("review", "allow", "Acme/Widgets"),
    "review disallow": ("review", "disallow", PUBLIC_REPOSITORY),
}


def _config(project: Path, text: str) -> None:
    (project / ".theurian/config.toml").write_text(text, encoding="utf-8")


def test_a_misspelt_redact_participants_is_refused_before_any_request_and_the_right_key_redacts(
        installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project_in_process(tmp_path / "p")
    text, line = MISSPELT["redact_participant"]
    _config(project, text)
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        refused = ingest(installation, project, fake)
        assert (refused.returncode, refused.stderr, fake.requests) == (1, PREFIX + line + "\n", 0)
        assert record_files(project) == {}
        _config(project, text.replace("redact_participant =", "redact_participants ="))
        assert ingest(installation, project, fake).returncode == 0
    files = record_files(project)
    assert files and not any(b'"alice"' in data for data in files.values())


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("case", sorted(MISSPELT))
def test_every_reader_of_the_config_refuses_an_unknown_key_or_table_in_one_line(
        installation: Installation, tmp_path: Path, reader: str, case: str) -> None:
    project = installation.new_project_in_process(tmp_path / "p")
    text, line = MISSPELT[case]
    _config(project, text)
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        result = installation.cli(*READERS[reader], "--project", str(project), extra_env=ingest_env(fake))
        assert (result.returncode, result.stderr, fake.requests) == (1, PREFIX + line + "\n", 0)
    assert (project / ".theurian/config.toml").read_text(encoding="utf-8") == text
    assert not (project / ".theurian/review").exists()


def test_sync_fails_its_config_reading_stages_naming_the_key(installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project_in_process(tmp_path / "p")
    text, line = MISSPELT["redact_participant"]
    _config(project, text)
    with FakeGitHub(small_corpus(load_fixture())).running() as fake:
        result = installation.cli("sync", "--max-wait", "0", "--project", str(project), extra_env=ingest_env(fake))
        assert (result.returncode, fake.requests) == (1, 0)
    failed = [row for row in result.stdout.splitlines() if " failed " in row]
    assert failed and failed[0].startswith("review ingest") and all(row.endswith(line) for row in failed)
    assert record_files(project) == {}


def test_every_key_any_module_reads_is_accepted_and_so_are_the_initial_and_sample_configs(
        installation: Installation, tmp_path: Path) -> None:
    every = (f'[review]\n{ALLOW}secrets = "warn"\nredact_participants = false\n'
             'acknowledged_secrets = ["0123456789abcdef"]\n')
    sample = Path(__file__).parents[2] / "fixtures/sample-project/.theurian/config.toml"
    assert set(PROJECT_CONFIG_KEYS["review"]) == set(KEYS.split(", "))
    texts = (every, INITIAL_CONFIG, sample.read_text(encoding="utf-8"), "", "# only a comment\n")
    for index, text in enumerate(texts):
        project = installation.new_project_in_process(tmp_path / f"p{index}")
        # Acknowledged fingerprints are keyed by a salt: without one, `review scan` refuses to make a new salt
        # under them (tests/e2e/test_review_salt.py), so the project has the salt they would have come from.
        project_salt(project)
        _config(project, text)
        for reader in ("review scan", "review status", "review allow"):
            result = installation.cli(*READERS[reader], "--project", str(project))
            assert result.returncode == 0, (text, reader, result.stderr)


def test_a_write_intent_tool_over_mcp_refuses_a_project_whose_config_holds_an_unknown_key(
        installation: Installation, tmp_path: Path) -> None:
    with installation.in_process():
        shop = new_shop(tmp_path / "shop")
    text, line = MISSPELT["secret"]
    _config(shop.root, text)
    change = {"projectId": PROJECT_ID, "itemId": shop.item_id, "expectedRevision": shop.revision_id,
              "body": "Take the lock after the reads.\n", "author": "agent-7"}
    with running_daemon(installation) as daemon:
        [refused] = call_tools(daemon.mcp_url, [("knowledge.proposeChange", change)])
        assert refused.is_error and line in refused.text, refused.text
        assert proposals(shop.root) == []
        _config(shop.root, text.replace("secret =", "secrets ="))
        [drafted] = call_tools(daemon.mcp_url, [("knowledge.proposeChange", change)])
        assert not drafted.is_error, drafted.text
    assert len(proposals(shop.root)) == 1


def test_status_with_a_misspelt_key_fails_the_allowlist_row_and_still_checks_the_lake_and_the_store(
        installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project_in_process(tmp_path / "p")
    copy_fixture_lake(project)
    installation.cli_in_process("review", "build", "--project", str(project))
    _config(project, MISSPELT["redact_participant"][0])
    [document] = orjson.loads(installation.cli("project", "status", "p", "--json").stdout)["summary"]["projects"]
    state = document["state"]
    assert state["allowlist"]["level"] == "fail" and "redact_participant" in state["allowlist"]["state"]
    assert state["evidence lake"]["level"] == "ok"
    assert state["review store"]["level"] == "ok" and "current with the lake" in state["review store"]["state"]
