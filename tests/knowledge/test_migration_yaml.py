"""What a migration's YAML may not hold (anchors, aliases, a key twice) and how unreadable YAML is reported, on
both paths that read a migration: `migrate apply` and `propose accept`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from knowledge.apply import apply_migrations
from knowledge.errors import MigrationInvalidError, ProposalError
from knowledge.migration_yaml import MAX_DEPTH, read_yaml
from knowledge.proposal_lifecycle import accept_proposal
from tests.knowledge.authoring import MigrationWriter, copy_sample
from tests.knowledge.proposal_support import PROJECT_ID, drafted, new_shop
from tests.support.installation import Installation

BOMB_SECONDS = 60  # the bomb took minutes before it was refused; refused, it takes a blink


def alias_bomb() -> str:
    """Nine levels of ten aliases each: 718 bytes of YAML that expand to 10**9 leaves."""
    levels = ["&a0 [" + ",".join(["1"] * 10) + "]"]
    for n in range(1, 9):
        levels.append(f"&a{n} [" + ", ".join([f"*a{n - 1}"] * 10) + "]")
    return "bomb: [" + ", ".join(levels) + "]\n"


def _written(root: Path, edit: tuple[str, str] | None = None, *, append: str = "") -> tuple[Path, str]:
    writer = MigrationWriter(root)
    writer.item("x.a", "A.")
    path = writer.write("yaml")
    text = path.read_text(encoding="utf-8")
    if edit is not None:
        assert edit[0] in text
        text = text.replace(edit[0], edit[1], 1)
    path.write_text(text + append, encoding="utf-8")
    return path, text + append


def _line_of(text: str, fragment: str) -> int:
    return text[: text.index(fragment)].count("\n") + 1


def _proposal_holding(tmp_path: Path, edit: tuple[str, str] | None = None, *, append: str = "") -> tuple[Path, str]:
    """A drafted proposal whose migration was edited (its migrationSha256 updated to match, as an editor would)."""
    shop = new_shop(tmp_path / "shop")
    payload = drafted("knowledge.generateMigrationDraft", {
        "projectId": PROJECT_ID, "author": "a", "description": "alias it",
        "operations": [{"op": "addAlias", "alias": "lo", "itemId": shop.item_id}]})
    folder = shop.root / payload["proposalDirectory"]
    migration = folder / payload["migrationFile"]
    text = migration.read_text(encoding="utf-8")
    if edit is not None:
        assert edit[0] in text
        text = text.replace(edit[0], edit[1], 1)
    migration.write_text(text + append, encoding="utf-8")
    trail = json.loads((folder / "evidence.json").read_text(encoding="utf-8"))
    trail["migrationSha256"] = "sha256:" + hashlib.sha256(migration.read_bytes()).hexdigest()
    (folder / "evidence.json").write_text(json.dumps(trail), encoding="utf-8")
    return shop.root, payload["proposalId"]


def test_an_anchor_or_alias_in_a_migration_is_refused_naming_file_and_line(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    path, text = _written(root, ("  owner: platform-team\n", "  owner: &who platform-team\n"),
                          append="extra: *who\n")
    with pytest.raises(MigrationInvalidError) as refused:
        apply_migrations(root)
    assert refused.value.message.startswith(f"migration {path.name} is invalid at the document: line "
                                            f"{_line_of(text, '&who')}: an anchor (&name or *name) is not allowed")


def test_the_alias_bomb_is_refused_at_once_by_migrate_apply(installation: Installation, tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    path, _ = _written(root, append=alias_bomb())
    assert len(alias_bomb().encode()) < 800
    result = installation.cli("migrate", "apply", "--project", str(root), timeout=BOMB_SECONDS)
    assert result.returncode == 1
    assert f"migration {path.name} is invalid at the document: line " in result.stderr
    assert "an anchor (&name or *name) is not allowed in a migration" in result.stderr


def test_propose_accept_refuses_a_proposal_migration_holding_the_alias_bomb(tmp_path: Path) -> None:
    root, proposal_id = _proposal_holding(tmp_path, append=alias_bomb())
    with pytest.raises(ProposalError, match=r"was not accepted: migration \S+\.yaml is invalid at the document: "
                                            r"line \d+: an anchor \(&name or \*name\) is not allowed"):
        accept_proposal(root, proposal_id)
    assert not any((root / ".theurian/migrations").glob("*alias-it.yaml"))


@pytest.mark.parametrize(("original", "doubled", "key"), [
    ("  owner: platform-team\n", "  owner: alice\n  owner: mallory\n", "owner"),
    ("    sensitivity: internal\n", "    sensitivity: confidential\n    sensitivity: public\n", "sensitivity"),
])
def test_a_key_twice_in_one_mapping_is_refused_naming_file_line_and_key(tmp_path: Path, original: str,
                                                                        doubled: str, key: str) -> None:
    root = copy_sample(tmp_path / "sample")
    path, text = _written(root, (original, doubled))
    second = _line_of(text, doubled) + 1
    with pytest.raises(MigrationInvalidError) as refused:
        apply_migrations(root)
    assert refused.value.message.startswith(f"migration {path.name} is invalid at the document: line {second}: "
                                            f"the key '{key}' appears twice in one mapping")


def test_propose_accept_refuses_a_proposal_migration_with_a_key_twice(tmp_path: Path) -> None:
    root, proposal_id = _proposal_holding(tmp_path, ("author: a\n", "author: a\nauthor: mallory\n"))
    with pytest.raises(ProposalError, match=r"line \d+: the key 'author' appears twice in one mapping"):
        accept_proposal(root, proposal_id)


def test_unreadable_yaml_is_reported_with_the_problem_and_its_line_and_column(tmp_path: Path) -> None:
    root = copy_sample(tmp_path / "sample")
    path, text = _written(root, ("  owner: platform-team\n", "  owner: platform-team\n\towner: tab\n"))
    with pytest.raises(MigrationInvalidError) as refused:
        apply_migrations(root)
    line = _line_of(text, "\towner")
    assert refused.value.message == (
        f"migration {path.name} is invalid at the document: not readable as UTF-8 YAML (found a tab character "
        f"that violates indentation at line {line}:1); nothing was changed"
    )


def test_nesting_is_read_to_the_bound_and_refused_one_past_it() -> None:
    """Collections nested MAX_DEPTH deep, the document's own mapping included, read; one more is refused, so the
    bound can neither be clamped nor crash the composer."""
    def nested(depth: int) -> bytes:  # the document's mapping, then depth - 1 flow sequences inside it
        return ("key: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n").encode("utf-8")

    assert read_yaml("x.yaml", nested(MAX_DEPTH)) is not None
    with pytest.raises(MigrationInvalidError, match=f"nested deeper than {MAX_DEPTH} levels"):
        read_yaml("x.yaml", nested(MAX_DEPTH + 1))
