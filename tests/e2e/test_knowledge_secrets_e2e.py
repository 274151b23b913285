"""A secret never becomes knowledge an agent is served: `migrate apply` and `migrate validate` refuse the
migration holding it (through the real CLI), a state that holds one anyway (built under an acknowledgement since
withdrawn, as one built before the gate) serves it on no path (CLI, and the daemon through the SDK client), and
the cure docs/secrets.md documents — take the secret out of the body, give the migration the body's new hash,
apply — works even for a migration that was applied."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml

from evidence.content_policy import SALT_FILE, project_salt
from tests.knowledge.authoring import copy_sample
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import call_tools
from theurian.secret_scan import fingerprint

TOKEN = "ghp_Q7vT2mX9pL4kR8sW1nB6yH3cJ5dF0gA2eZ7u"
BODY = f"Use {TOKEN} to deploy walrus.\n"
CLEAN = "Use the deploy bot's credential (in the vault) to deploy walrus.\n"
MIGRATION = "01K1C0000000000000000000M3-deploy.yaml"
BODY_FILE = ".theurian/knowledge/operations/deploy.md"


def _write_deploy(root: Path, body: str) -> None:
    (root / BODY_FILE).parent.mkdir(parents=True, exist_ok=True)
    (root / BODY_FILE).write_text(body, encoding="utf-8")
    document = {
        "apiVersion": "theurian.dev/v1", "id": MIGRATION[:26], "createdAt": "2026-09-03T00:00:00Z",
        "author": "ops", "dependsOn": [], "description": "how to deploy",
        "operations": [
            {"op": "createItem", "itemId": "operations.deploy", "kind": "operations", "namespace": "operations",
             "owner": "ops-team", "sensitivity": "internal"},
            {"op": "upsertRevision", "itemId": "operations.deploy", "revisionId": "01K1C0000000000000000000R3",
             "contentFile": "../knowledge/operations/deploy.md",
             "contentSha256": "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest(),
             "metadata": {"title": "Deploying", "contentType": "text/markdown", "kind": "operations",
                          "namespace": "operations", "status": "approved", "owner": "ops-team",
                          "trustLevel": "reviewed", "sensitivity": "internal", "sourceAnchors": [],
                          "originatesInTheurian": True}},
        ],
    }
    path = root / ".theurian/migrations" / MIGRATION
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")


def _project(installation: Installation, folder: Path, project_id: str) -> Path:
    root = copy_sample(folder)
    (root / ".theurian/config.toml").write_text("[review]\nallowlist = []\n", encoding="utf-8")
    installation.cli_in_process("project", "register", str(root), "--id", project_id)
    return root


def _acknowledge(root: Path, prints: list[str]) -> None:
    (root / ".theurian/config.toml").write_text(
        f"[review]\nallowlist = []\nacknowledged_secrets = {json.dumps(prints)}\n", encoding="utf-8")


def test_migrate_apply_and_validate_refuse_a_migration_whose_body_holds_a_secret_and_build_nothing(
        module_installation: Installation, tmp_path: Path) -> None:
    root = _project(module_installation, tmp_path / "fresh", "fresh")
    _write_deploy(root, BODY)
    print_ = fingerprint(project_salt(root), TOKEN)
    for command in ("apply", "validate"):
        result = module_installation.cli("migrate", command, "--project", str(root))
        assert result.returncode == 1, result
        assert result.stderr == (
            f"theurian: SECRET_IN_TEXT: {BODY_FILE} line 1 holds a secret (github-token, fingerprint {print_}); "
            "nothing was changed. Take the secret out (and revoke it: it was written down), or, if it is not "
            f"one, add \"{print_}\" to [review] acknowledged_secrets in .theurian/config.toml.\n")
        assert TOKEN not in result.stdout + result.stderr
    assert not (root / ".theurian/state/knowledge-active.json").exists()
    searched = module_installation.cli("knowledge", "search", "walrus", "--project", str(root), "--json")
    assert searched.returncode == 1 and TOKEN not in searched.stdout + searched.stderr
    assert "theurian migrate apply" in searched.stdout + searched.stderr
    # The cure for a migration not yet applied: the secret out of the body, the body's new hash in the migration.
    _write_deploy(root, CLEAN)
    module_installation.cli("migrate", "apply", "--project", str(root), check=True)
    found = module_installation.cli("knowledge", "search", "walrus", "--project", str(root), "--json", check=True)
    assert [hit["itemId"] for hit in json.loads(found.stdout)["summary"]["results"]] == ["operations.deploy"]


def test_migrate_validate_in_a_project_with_no_salt_yet_makes_it_and_names_the_fingerprint(
        module_installation: Installation, tmp_path: Path) -> None:
    """It named no fingerprint and a cure (`review scan --dry-run`) that makes no salt over an empty lake."""
    root = _project(module_installation, tmp_path / "saltless", "saltless")
    _write_deploy(root, BODY)
    assert not (root / SALT_FILE).exists()
    result = module_installation.cli("migrate", "validate", "--project", str(root))
    assert result.returncode == 1 and (root / SALT_FILE).exists()
    print_ = fingerprint(project_salt(root), TOKEN)
    assert f"(github-token, fingerprint {print_})" in result.stderr
    assert f"add \"{print_}\" to [review] acknowledged_secrets" in result.stderr


def _applied_under_an_acknowledgement(installation: Installation, tmp_path: Path, name: str) -> Path:
    """A project whose applied state holds the body with TOKEN, let in by acknowledging its fingerprint."""
    root = _project(installation, tmp_path / name, name)
    _write_deploy(root, BODY)
    _acknowledge(root, [fingerprint(project_salt(root), TOKEN)])
    installation.cli_in_process("migrate", "apply", "--project", str(root))
    return root


def test_a_state_holding_a_secret_serves_it_on_no_path_and_the_documented_cure_rebuilds_it(
        module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path) -> None:
    root = _applied_under_an_acknowledgement(module_installation, tmp_path, "held")
    _acknowledge(root, [])  # withdrawn: the state now holds what the gate refuses, as one built before it did
    outputs = [module_installation.cli("knowledge", "search", "walrus", "--project", str(root), *flags)
               for flags in ((), ("--json",), ("--csv",))]
    assert all(TOKEN not in out.stdout + out.stderr for out in outputs)
    assert json.loads(outputs[1].stdout)["summary"]["count"] == 0
    answers = call_tools(module_daemon.mcp_url, [
        ("knowledge.search", {"projectId": "held", "query": "walrus"}),
        ("knowledge.search", {"projectId": "held", "query": "deploy"}),
        ("knowledge.get", {"projectId": "held", "itemId": "operations.deploy"}),
    ])
    assert all(TOKEN not in answer.text for answer in answers)
    assert answers[0].valid("knowledge-search-response.schema.json")["count"] == 0
    assert answers[2].is_error and "No knowledge item 'operations.deploy' is available" in answers[2].text
    refused = module_installation.cli("migrate", "apply", "--project", str(root))
    assert refused.returncode == 1 and f"SECRET_IN_TEXT: {BODY_FILE} line 1" in refused.stderr
    # The cure for an applied one: the same edit. The checksum guard admits the edit that takes a secret out.
    _write_deploy(root, CLEAN)
    module_installation.cli("migrate", "validate", "--project", str(root), check=True)
    module_installation.cli("migrate", "apply", "--project", str(root), check=True)
    status = module_installation.cli("migrate", "status", "--project", str(root), "--json", check=True)
    assert TOKEN not in status.stdout
    got = call_tools(module_daemon.mcp_url, [("knowledge.get", {"projectId": "held", "itemId": "operations.deploy"})])
    assert got[0].valid("knowledge-get-response.schema.json")["body"] == CLEAN


def test_knowledge_status_counts_no_item_every_read_path_withholds_for_its_secret(
        module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path) -> None:
    root = _applied_under_an_acknowledgement(module_installation, tmp_path, "counted")
    print_ = fingerprint(project_salt(root), TOKEN)
    status = ("knowledge.status", {"projectId": "counted"})
    [acknowledged] = call_tools(module_daemon.mcp_url, [status])
    served = acknowledged.valid("knowledge-status-response.schema.json")
    _acknowledge(root, [])  # withdrawn: search and get now withhold the item, so the counts must too
    [withheld, got] = call_tools(module_daemon.mcp_url, [
        status, ("knowledge.get", {"projectId": "counted", "itemId": "operations.deploy"})])
    assert got.is_error
    counted = withheld.valid("knowledge-status-response.schema.json")
    assert counted["itemCount"] == served["itemCount"] - 1
    assert counted["itemsByStatus"] == served["itemsByStatus"] | {"approved": served["itemsByStatus"]["approved"] - 1}
    assert counted["itemCount"] == sum(counted["itemsByStatus"].values())
    assert "integrity" not in counted and counted["stateHash"] == served["stateHash"]
    _acknowledge(root, [print_])  # acknowledged again: counted again, with nothing rebuilt
    [again] = call_tools(module_daemon.mcp_url, [status])
    assert again.valid("knowledge-status-response.schema.json") == served
