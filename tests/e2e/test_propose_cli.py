"""`theurian propose …` through the real console script: the three drafts print the tools' payload, list, accept,
reject, and every refusal is one line and an exit code."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.knowledge.proposal_support import (
    PROPOSAL_SCHEMA,
    REPOSITORY,
    THREAD_KEY,
    candidate_arguments,
    new_shop,
    proposals,
)
from tests.support.installation import Installation


def test_the_three_drafts_list_reject_and_accept_at_the_command_line(installation: Installation,
                                                                     tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    where = ("--project", str(shop.root))
    body = tmp_path / "body.md"
    body.write_text("Locks after reads.\n", encoding="utf-8")
    operations = tmp_path / "operations.yaml"
    operations.write_text(yaml.safe_dump([{"op": "addAlias", "alias": "lo", "itemId": shop.item_id}]))
    args = candidate_arguments(shop)

    change = installation.cli("propose", "change", shop.item_id, "--expected-revision", shop.revision_id,
                              "--body-file", str(body), "--author", "me", *where, "--json", check=True)
    migration = installation.cli("propose", "migration", "--operations-file", str(operations), "--author", "me",
                                 "--description", "Alias the lock order", *where, "--json", check=True)
    candidate = installation.cli(
        "propose", "candidate", "--repository", REPOSITORY, "--record-key", THREAD_KEY, "--fix-commit",
        shop.fix_commit, "--item-id", args["itemId"], "--title", args["title"], "--body-file", str(body),
        "--kind", "convention", "--category", "reliability-rule", "--owner", "orders-team", "--author", "me",
        "--evidence", "the thread asked for it", *where, "--json", check=True)
    payloads = [json.loads(result.stdout) for result in (change, migration, candidate)]
    for payload in payloads:
        PROPOSAL_SCHEMA.validate(payload)
    trail = json.loads((shop.root / payloads[2]["evidenceFile"]).read_text(encoding="utf-8"))
    assert trail["draftedBy"] == "theurian propose candidate" and trail["gate"]["ciSuccessful"]["outcome"] == "met"

    listed = installation.cli("propose", "list", *where, check=True)
    assert listed.stdout.count("\tpending\t") == 3
    installation.cli("propose", "reject", payloads[1]["proposalId"], *where, check=True)
    assert payloads[1]["proposalId"] not in proposals(shop.root)
    accepted = installation.cli("propose", "accept", payloads[0]["proposalId"], *where, check=True)
    assert payloads[0]["bodyDestination"] in accepted.stdout
    assert (shop.root / ".theurian/migrations" / payloads[0]["migrationFile"]).is_file()
    refused = installation.cli("propose", "reject", payloads[0]["proposalId"], *where)
    assert refused.returncode == 1 and "already accepted" in refused.stderr


def test_refusals_are_one_line_with_an_exit_code_and_a_conflict_prints_its_envelope(installation: Installation,
                                                                                    tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    where = ("--project", str(shop.root))
    body = tmp_path / "body.md"
    body.write_text("x\n", encoding="utf-8")
    conflict = installation.cli("propose", "change", shop.item_id, "--expected-revision", "01K30000000000000000000999",
                                "--body-file", str(body), "--author", "me", *where, "--json")
    assert conflict.returncode == 1
    assert json.loads(conflict.stdout)["error"]["code"] == "REVISION_CONFLICT"
    unknown = installation.cli("propose", "accept", "01K9ZZZZZZZZZZZZZZZZZZZZZZ", *where)
    bad_category = installation.cli("propose", "candidate", "--repository", REPOSITORY, "--record-key", THREAD_KEY,
                                    "--fix-commit", shop.fix_commit, "--item-id", "a.b", "--title", "t",
                                    "--body-file", str(body), "--kind", "convention", "--category", "folklore",
                                    "--owner", "o", "--author", "me", *where)
    assert (unknown.returncode, bad_category.returncode) == (1, 2)
    for result in (conflict, unknown, bad_category):
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert proposals(shop.root) == []


def test_every_propose_command_has_help_and_is_documented_as_theurian_propose() -> None:
    import typer.main
    from typer.testing import CliRunner

    from theurian.cli.main import app

    group = typer.main.get_command(app).commands["propose"]  # type: ignore[attr-defined]
    names = sorted(group.commands)
    assert names == ["accept", "candidate", "change", "list", "migration", "reject"]
    docs = (Path(__file__).resolve().parents[2] / "docs" / "proposals.md").read_text(encoding="utf-8")
    runner = CliRunner()
    for name in names:
        assert f"theurian propose {name}" in docs, name
        shown = runner.invoke(app, ["propose", name, "--help"])
        assert shown.exit_code == 0 and "Usage:" in shown.output, name
