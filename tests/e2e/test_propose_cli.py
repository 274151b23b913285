"""`theurian propose …` through the real console script: the three drafts print the tools' payload, list, accept,
reject, and every refusal is one line and an exit code."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import yaml

import schemas
from tests.knowledge.proposal_support import (
    PROPOSAL_SCHEMA,
    REPOSITORY,
    THREAD_KEY,
    Shop,
    candidate_arguments,
    new_shop,
    proposals,
)
from tests.support.installation import THEURIAN_BIN, Installation

BODY_LIMIT = schemas.load("mcp", "knowledge-propose-change-input.schema.json")["properties"]["body"]["maxLength"]
PAST = f"holds more than {BODY_LIMIT} characters, the longest body knowledge.proposeChange admits"


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
    payloads = [json.loads(result.stdout)["summary"] for result in (change, migration, candidate)]
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


def test_the_next_steps_of_a_draft_and_an_accept_name_the_project_they_were_given(installation: Installation,
                                                                                   tmp_path: Path) -> None:
    # Said before: "next: Accept it with `theurian propose accept ID`", which pasted outside the project found none.
    shop = new_shop(tmp_path / "shop")
    operations = tmp_path / "operations.yaml"
    operations.write_text(yaml.safe_dump([{"op": "addAlias", "alias": "lo", "itemId": shop.item_id}]))
    drafted = installation.cli("propose", "migration", "--operations-file", str(operations), "--author", "me",
                               "--description", "Alias it", "--project", str(shop.root), cwd=tmp_path, check=True)
    accept = next(line for line in drafted.stdout.splitlines() if line.startswith("next: Accept it with `"))
    command = accept.split("`")[1]
    assert command.endswith(f" --project {shop.root}")
    env = installation.env | {"PATH": f"{Path(THEURIAN_BIN).parent}{os.pathsep}{os.environ['PATH']}"}
    pasted = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                            encoding="utf-8", timeout=120)
    assert pasted.returncode == 0, pasted.stderr
    assert pasted.stdout.splitlines()[-1] == ("next: commit these files and open a pull request; after the merge run "
                                              f"`theurian migrate apply --project {shop.root}`")
    assert "--project" not in json.dumps(json.loads(installation.cli(
        "propose", "migration", "--operations-file", str(operations), "--author", "me", "--description", "Again",
        "--project", str(shop.root), "--json", check=True).stdout)["summary"]["nextSteps"])


def test_refusals_are_one_line_with_an_exit_code_and_a_conflict_prints_its_envelope(installation: Installation,
                                                                                    tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    where = ("--project", str(shop.root))
    body = tmp_path / "body.md"
    body.write_text("x\n", encoding="utf-8")
    conflict = installation.cli("propose", "change", shop.item_id, "--expected-revision", "01K30000000000000000000999",
                                "--body-file", str(body), "--author", "me", *where, "--json")
    assert conflict.returncode == 1
    envelope = json.loads(conflict.stdout)
    assert (envelope["command"], envelope["ok"]) == ("propose change", False)
    assert envelope["summary"]["code"] == "REVISION_CONFLICT"
    assert envelope["summary"]["error"] == conflict.stderr.strip().removeprefix("theurian: ")
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
    from tests.support.cli_app import at, invoke

    group = at("propose")
    names = sorted(group.commands)
    assert names == ["accept", "candidate", "change", "list", "migration", "reject"]
    docs = (Path(__file__).resolve().parents[2] / "docs" / "proposals.md").read_text(encoding="utf-8")
    for name in names:
        assert f"theurian propose {name}" in docs, name
        shown = invoke(["propose", name, "--help"])
        assert shown.exit_code == 0 and "Usage:" in shown.output, name


def _drafted_migration(installation: Installation, shop_root: Path, tmp_path: Path) -> dict[str, str]:
    operations = tmp_path / "operations.yaml"
    operations.write_text(yaml.safe_dump([{"op": "addAlias", "alias": "lo", "itemId": "architecture.lock-order"}]))
    result = installation.cli("propose", "migration", "--operations-file", str(operations), "--author", "me",
                              "--description", "Alias the lock order", "--project", str(shop_root), "--json",
                              check=True)
    payload: dict[str, str] = json.loads(result.stdout)["summary"]
    return payload


def _point_evidence_at(folder: Path, old: str, new: str) -> None:
    (folder / old).rename(folder / new)
    trail = json.loads((folder / "evidence.json").read_text(encoding="utf-8"))
    trail["migrationFile"] = new
    (folder / "evidence.json").write_text(json.dumps(trail), encoding="utf-8")


def test_accept_refuses_a_migration_file_name_that_is_not_a_migration_name_or_disagrees_with_its_id(
        installation: Installation, tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    for index, bad in enumerate(("evil.yaml", "01K9ZZZZZZZZZZZZZZZZZZZZZZ-alias-the-lock-order.yaml")):
        payload = _drafted_migration(installation, shop.root, tmp_path)
        folder = shop.root / payload["proposalDirectory"]
        _point_evidence_at(folder, payload["migrationFile"], bad)
        refused = installation.cli("propose", "accept", payload["proposalId"], "--project", str(shop.root))
        assert refused.returncode == 1, (bad, refused.stdout)
        assert f"proposal {payload['proposalId']}" in refused.stderr and bad in refused.stderr, refused.stderr
        assert ("not a migration file name", "the document's id is")[index] in refused.stderr, refused.stderr
        assert not (shop.root / ".theurian/migrations" / bad).exists()
    assert installation.cli("migrate", "apply", "--project", str(shop.root)).returncode == 0


def test_accept_refuses_a_migration_edited_since_it_was_drafted_naming_the_file(installation: Installation,
                                                                                tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    payload = _drafted_migration(installation, shop.root, tmp_path)
    trail = json.loads((shop.root / payload["evidenceFile"]).read_text(encoding="utf-8"))
    migration = shop.root / payload["proposalDirectory"] / payload["migrationFile"]
    assert trail["migrationSha256"] == "sha256:" + hashlib.sha256(migration.read_bytes()).hexdigest()
    migration.write_text(migration.read_text(encoding="utf-8").replace("alias: lo", "alias: mallory"),
                         encoding="utf-8")
    refused = installation.cli("propose", "accept", payload["proposalId"], "--project", str(shop.root))
    assert refused.returncode == 1
    assert payload["migrationFile"] in refused.stderr and "migrationSha256" in refused.stderr, refused.stderr
    assert not (shop.root / ".theurian/migrations" / payload["migrationFile"]).exists()


def test_an_operations_file_with_an_anchor_or_a_repeated_key_is_a_usage_error_and_drafts_nothing(
    installation: Installation, tmp_path: Path
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    installation.cli_in_process("init", str(root))
    files = {"repeated": "- op: addAlias\n  alias: a\n  alias: b\n  itemId: x\n",
             "anchored": "- &o {op: addAlias, alias: a, itemId: x}\n- *o\n"}
    for name, text in files.items():
        (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
        result = installation.cli("propose", "migration", "--project", str(root), "--author", "me",
                                  "--description", "d", "--operations-file", str(tmp_path / f"{name}.yaml"))
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert ("appears twice" if name == "repeated" else "an anchor") in result.stderr
    assert not (root / ".theurian/proposals").exists() or list((root / ".theurian/proposals").iterdir()) == []


def _change(installation: Installation, shop: Shop, body: Path | str) -> subprocess.CompletedProcess[str]:
    # timeout: a FIFO nobody writes to must be refused, not waited on; a hang fails the test, bounded.
    return installation.cli("propose", "change", shop.item_id, "--expected-revision", shop.revision_id,
                            "--body-file", str(body), "--author", "me", "--project", str(shop.root), "--json",
                            timeout=60)


def test_a_body_file_at_the_tools_bound_is_drafted_and_one_character_past_it_is_refused_unwritten(
        installation: Installation, tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    limit, past = BODY_LIMIT, PAST
    # Characters, not bytes: four-byte characters at the bound are 4 × limit bytes, and one more byte is past both.
    for name, text, drafted in (("ascii-at", "a" * limit, True), ("ascii-past", "a" * (limit + 1), False),
                                ("wide-at", "\U0001f600" * limit, True),
                                ("wide-past", "\U0001f600" * limit + "a", False)):
        body = tmp_path / f"{name}.md"
        body.write_text(text, encoding="utf-8")
        result = _change(installation, shop, body)
        if drafted:
            assert result.returncode == 0, result.stderr
            payload = json.loads(result.stdout)["summary"]
            assert (shop.root / payload["bodyFile"]).read_text(encoding="utf-8") == text
        else:
            assert (result.returncode, result.stderr) == (2, f"theurian: --body-file {body} {past}\n")
    assert len(proposals(shop.root)) == 2


def test_a_body_file_that_is_a_fifo_a_device_a_folder_missing_or_not_utf8_is_refused_in_one_line(
        installation: Installation, tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # nobody ever writes to it: reading it would wait forever
    (tmp_path / "latin1.md").write_bytes(b"caf\xe9\n")
    huge = tmp_path / "huge.md"
    with open(huge, "wb") as grown:
        grown.truncate(30_000_000)  # the 30 MB draft the tester saw written, refused before any byte is read
    cases = {fifo: "cannot be read: the file is not a regular file",
             Path("/dev/zero"): "cannot be read: the file is not a regular file",
             tmp_path: "cannot be read: the file is not a regular file",
             tmp_path / "nothing.md": "does not exist",
             tmp_path / "latin1.md": "is not UTF-8 text (byte 3)",
             huge: PAST}
    for body, reason in cases.items():
        result = _change(installation, shop, body)
        assert (result.returncode, result.stderr) == (2, f"theurian: --body-file {body} {reason}\n")
    candidate = installation.cli(
        "propose", "candidate", "--repository", REPOSITORY, "--record-key", THREAD_KEY, "--fix-commit",
        shop.fix_commit, "--item-id", "a.b", "--title", "t", "--body-file", str(fifo), "--kind", "convention",
        "--category", "reliability-rule", "--owner", "o", "--author", "me", "--project", str(shop.root), timeout=60)
    assert (candidate.returncode, candidate.stderr) == (2, f"theurian: --body-file {fifo} {cases[fifo]}\n")
    operations = installation.cli("propose", "migration", "--operations-file", "/dev/zero", "--author", "me",
                                  "--description", "d", "--project", str(shop.root), timeout=60)
    assert (operations.returncode, operations.stderr) == (
        2, f"theurian: --operations-file /dev/zero {cases[fifo]}\n")
    assert proposals(shop.root) == []


def test_propose_list_shows_a_draft_trail_s_control_and_hidden_characters_escaped(installation: Installation,
                                                                                  tmp_path: Path) -> None:
    shop = new_shop(tmp_path / "shop")
    where = ("--project", str(shop.root))
    operations = tmp_path / "operations.yaml"
    operations.write_text(yaml.safe_dump([{"op": "addAlias", "alias": "lo", "itemId": shop.item_id}]))
    drafted = installation.cli("propose", "migration", "--operations-file", str(operations), "--author", "me",
                               "--description", "Alias", *where, "--json", check=True)
    trail_file = shop.root / json.loads(drafted.stdout)["summary"]["evidenceFile"]
    trail = json.loads(trail_file.read_text(encoding="utf-8"))
    trail_file.write_text(json.dumps(trail | {"draftedBy": "\x1b[2Jme\u200b\U000e0041"}), encoding="utf-8")
    listed = installation.cli("propose", "list", *where, check=True).stdout
    assert "\x1b" not in listed and "\u200b" not in listed
    assert listed.rstrip("\n").endswith("\t\\x1b[2Jme\\u200b\\U000e0041")
