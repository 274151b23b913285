"""Secrets refused where knowledge enters: `propose accept`, `index build`, and the write-intent tools' drafts —
naming file, line, type and fingerprint, never the value; an acknowledged fingerprint passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evidence.content_policy import SALT_FILE, project_salt
from knowledge.apply import apply_migrations, migration_status
from knowledge.errors import SECRET_REFUSAL_CODE, MigrationChecksumMismatchError, SecretInTextError
from knowledge.index import build_index
from knowledge.rehearsal import rehearse
from tests.knowledge.authoring import MigrationWriter
from tests.knowledge.proposal_support import (
    PROJECT_ID,
    call,
    candidate_arguments,
    drafted,
    new_shop,
    proposals,
    refused,
)
from tests.support.cli_app import invoke
from tests.support.installation import Installation
from tests.support.planted_secrets import PLANTED, in_prose
from theurian.secret_scan import fingerprint

KIND = "github-token"
SECRET = PLANTED[KIND]
BODY = f"Deploy with the bot.\n{in_prose(KIND)}\n"


def _acknowledge(root: Path, *prints: str) -> None:
    config = root / ".theurian/config.toml"
    text = config.read_text(encoding="utf-8").replace("allowlist = []", "allowlist = []\nacknowledged_secrets = "
                                                      + json.dumps(list(prints)))
    config.write_text(text, encoding="utf-8")


def _print(root: Path) -> str:
    return fingerprint(project_salt(root), SECRET)


@pytest.mark.parametrize("tool", ["knowledge.proposeChange", "review.generateKnowledgeCandidate"])
def test_a_write_intent_tool_refuses_a_body_holding_a_secret_naming_line_and_type_and_writes_nothing(
    tmp_path: Path, tool: str
) -> None:
    shop = new_shop(tmp_path / "shop")
    project_salt(shop.root)
    if tool == "knowledge.proposeChange":
        arguments = {"projectId": PROJECT_ID, "itemId": shop.item_id, "expectedRevision": shop.revision_id,
                     "body": BODY, "author": "agent-7"}
    else:
        arguments = candidate_arguments(shop, body=BODY)
    text = refused(tool, arguments)
    assert text.startswith(f"{SECRET_REFUSAL_CODE}: the draft's knowledge/")
    assert f" line 2 holds a secret ({KIND}, fingerprint {_print(shop.root)}); the draft was refused" in text
    assert SECRET not in text and proposals(shop.root) == []


def test_a_secret_in_a_drafts_description_is_refused_in_the_migration_it_would_write(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    text = refused("knowledge.generateMigrationDraft", {
        "projectId": PROJECT_ID, "author": "agent-7", "description": f"alias; key {PLANTED['aws-access-key']}",
        "operations": [{"op": "addAlias", "alias": "lo", "itemId": shop.item_id}]})
    assert "the draft's " in text and ".yaml line " in text and "(aws-access-key" in text
    assert PLANTED["aws-access-key"] not in text and proposals(shop.root) == []


def test_a_daemon_draft_never_makes_the_salt_and_still_refuses(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    text = refused("knowledge.proposeChange", {"projectId": PROJECT_ID, "itemId": shop.item_id,
                                               "expectedRevision": shop.revision_id, "body": BODY, "author": "a"})
    assert f"holds a secret ({KIND}); the draft was refused" in text
    assert not (shop.root / SALT_FILE).exists()
    # The cure it names works when followed: `review scan` makes the salt (over a lake with no record it changes
    # nothing else; `--dry-run`, which the refusal named before, makes none there), and the next draft's refusal
    # names the fingerprint to acknowledge.
    assert "`theurian review scan` makes it" in text
    invoke(["review", "scan", "--project", str(shop.root)])
    assert (shop.root / SALT_FILE).exists()
    again = refused("knowledge.proposeChange", {"projectId": PROJECT_ID, "itemId": shop.item_id,
                                                "expectedRevision": shop.revision_id, "body": BODY, "author": "a"})
    assert f"fingerprint {_print(shop.root)}" in again


def test_an_acknowledged_fingerprint_is_drafted(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    _acknowledge(shop.root, _print(shop.root))
    drafted("knowledge.proposeChange", {"projectId": PROJECT_ID, "itemId": shop.item_id,
                                        "expectedRevision": shop.revision_id, "body": BODY, "author": "a"})
    assert len(proposals(shop.root)) == 1


def test_accept_refuses_a_body_holding_a_secret_once_its_acknowledgement_is_withdrawn(
    installation: Installation, tmp_path: Path
) -> None:
    shop = new_shop(tmp_path / "shop")
    config = (shop.root / ".theurian/config.toml").read_text(encoding="utf-8")
    _acknowledge(shop.root, _print(shop.root))
    payload = drafted("knowledge.proposeChange", {"projectId": PROJECT_ID, "itemId": shop.item_id,
                                                  "expectedRevision": shop.revision_id, "body": BODY,
                                                  "author": "a"})
    (shop.root / ".theurian/config.toml").write_text(config, encoding="utf-8")
    result = installation.cli("propose", "accept", payload["proposalId"], "--project", str(shop.root))
    assert result.returncode == 1
    assert result.stderr == (
        f"theurian: {SECRET_REFUSAL_CODE}: {payload['bodyFile']} line 2 holds a secret ({KIND}, fingerprint "
        f"{_print(shop.root)}); proposal {payload['proposalId']} was not accepted and nothing was moved. Reject it "
        f"(`theurian propose reject {payload['proposalId']} --project {shop.root}`) and draft it again without the "
        "secret (and revoke it: it was written down), or, if it is not one, add "
        f"\"{_print(shop.root)}\" to [review] acknowledged_secrets in .theurian/config.toml.\n")
    assert not (shop.root / ".theurian/migrations" / payload["migrationFile"]).exists()
    _acknowledge(shop.root, _print(shop.root))
    installation.cli("propose", "accept", payload["proposalId"], "--project", str(shop.root), check=True)


def test_index_build_refuses_a_revision_holding_a_secret_naming_its_content_file_and_line(
    installation: Installation, tmp_path: Path
) -> None:
    shop = new_shop(tmp_path / "shop")
    writer = MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z")
    revision = writer.item("operations.deploy", BODY, title="Deploying")
    writer.write("deploy")
    config = (shop.root / ".theurian/config.toml").read_text(encoding="utf-8")
    _acknowledge(shop.root, _print(shop.root))
    apply_migrations(shop.root)  # `migrate apply` refuses it unacknowledged: the state holds it only this way
    (shop.root / ".theurian/config.toml").write_text(config, encoding="utf-8")
    result = installation.cli("index", "build", "--project", str(shop.root))
    content = f".theurian/knowledge/operations.deploy-{revision}.md"
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"theurian: {SECRET_REFUSAL_CODE}: {content} line 2 holds a secret ({KIND}, fingerprint "
        f"{_print(shop.root)}); no index was built.")
    assert SECRET not in result.stderr and not list((shop.root / ".theurian/state").glob("knowledge-index-*"))
    _acknowledge(shop.root, _print(shop.root))
    build_index(shop.root, "internal")


def test_a_secret_in_a_title_is_refused_by_index_build_as_the_title(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    writer = MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z")
    writer.item("operations.title", "fine", title=f"Key {PLANTED['slack-token']}")
    writer.write("title")
    config = (shop.root / ".theurian/config.toml").read_text(encoding="utf-8")
    _acknowledge(shop.root, fingerprint(project_salt(shop.root), PLANTED["slack-token"]))
    apply_migrations(shop.root)
    (shop.root / ".theurian/config.toml").write_text(config, encoding="utf-8")
    with pytest.raises(SecretInTextError) as refusal:
        build_index(shop.root, "internal")
    assert refusal.value.details["file"].endswith(".md (title)") and refusal.value.details["type"] == "slack-token"


def test_migrate_apply_refuses_a_secret_in_a_title_or_a_free_text_field_naming_where_it_is(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    before = (shop.root / ".theurian/state/knowledge-active.json").read_bytes()
    writer = MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z")
    writer.item("operations.title", "fine", title=f"Key {PLANTED['slack-token']}")
    path = writer.write("title")
    with pytest.raises(SecretInTextError) as refusal:
        apply_migrations(shop.root)
    assert refusal.value.details["file"].endswith(".md (title)") and refusal.value.details["type"] == "slack-token"
    assert refusal.value.message.endswith(".theurian/config.toml.") and "nothing was changed" in refusal.value.message
    path.unlink()
    owner = MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z")
    owner.op(op="changeOwner", itemId=shop.item_id, owner=f"team {PLANTED['aws-access-key']}")
    owner.write("owner")
    with pytest.raises(SecretInTextError) as refusal:
        rehearse(shop.root)  # `migrate validate`
    assert refusal.value.details["file"] == f".theurian/migrations/{owner.migration_id}-owner.yaml (operation 0, owner)"
    assert (shop.root / ".theurian/state/knowledge-active.json").read_bytes() == before


def test_removing_an_applied_migration_that_put_a_secret_in_the_state_is_admitted_and_rebuilds(
        tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    config = (shop.root / ".theurian/config.toml").read_text(encoding="utf-8")
    writer = MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z")
    writer.item("operations.deploy", BODY, title="Deploying")
    path = writer.write("deploy")
    _acknowledge(shop.root, _print(shop.root))
    apply_migrations(shop.root)
    (shop.root / ".theurian/config.toml").write_text(config, encoding="utf-8")
    with pytest.raises(SecretInTextError):
        apply_migrations(shop.root)
    path.unlink()
    assert migration_status(shop.root).edited == []
    outcome = apply_migrations(shop.root)
    assert outcome.rebuilt and outcome.pointer.migration_count == len(migration_status(shop.root).applied)


def test_removing_an_applied_migration_without_a_secret_is_still_a_checksum_mismatch(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    writer = MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z")
    writer.item("operations.deploy", "Deploy with the bot.\n", title="Deploying")
    path = writer.write("deploy")
    apply_migrations(shop.root)
    path.unlink()
    with pytest.raises(MigrationChecksumMismatchError):
        apply_migrations(shop.root)
    assert migration_status(shop.root).edited == [path.name]


def test_a_state_holding_an_unacknowledged_secret_withholds_the_item_from_get(tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    config = (shop.root / ".theurian/config.toml").read_text(encoding="utf-8")
    writer = MigrationWriter(shop.root, created_at="2026-09-02T00:00:00Z")
    writer.item("operations.deploy", BODY, title="Deploying")
    writer.write("deploy")
    _acknowledge(shop.root, _print(shop.root))
    apply_migrations(shop.root)
    served = call("knowledge.get", {"projectId": PROJECT_ID, "itemId": "operations.deploy"})
    assert served["structuredContent"]["body"] == BODY
    (shop.root / ".theurian/config.toml").write_text(config, encoding="utf-8")
    text = refused("knowledge.get", {"projectId": PROJECT_ID, "itemId": "operations.deploy"})
    assert text == f"No knowledge item 'operations.deploy' is available in project {PROJECT_ID!r}."
