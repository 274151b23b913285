"""`theurian review allow` re-run: a set-up step whose work is done exits 0 and says so, changing nothing."""

import json
from pathlib import Path

from tests.support.installation import Installation


def test_allowing_a_repository_already_allowed_in_any_spelling_exits_0_saying_so(installation: Installation,
                                                                                 tmp_path: Path) -> None:
    installation.cli("init", str(tmp_path), check=True)
    installation.cli("review", "allow", "Acme/Widgets", "--project", str(tmp_path), check=True)
    config = (tmp_path / ".theurian/config.toml").read_bytes()
    again = installation.cli("review", "allow", "acme/widgets", "--project", str(tmp_path))
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == ["Acme/Widgets is already on the review allowlist; nothing changed"]
    assert (tmp_path / ".theurian/config.toml").read_bytes() == config


def test_disallowing_a_repository_not_allowed_exits_0_saying_nothing_changed(installation: Installation,
                                                                             tmp_path: Path) -> None:
    installation.cli("init", str(tmp_path), check=True)
    config = (tmp_path / ".theurian/config.toml").read_bytes()
    again = installation.cli("review", "disallow", "acme/widgets", "--project", str(tmp_path))
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == ["acme/widgets is not on the review allowlist; nothing changed"]
    as_json = installation.cli("review", "disallow", "acme/widgets", "--json", "--project", str(tmp_path))
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == {
        "command": "review disallow", "ok": True, "summary": {
            "repository": "acme/widgets", "changed": False,
            "message": "acme/widgets is not on the review allowlist; nothing changed"}}
    assert (tmp_path / ".theurian/config.toml").read_bytes() == config


def test_allow_under_json_says_nothing_changed_as_its_line_does(installation: Installation, tmp_path: Path) -> None:
    installation.cli("init", str(tmp_path), check=True)
    installation.cli("review", "allow", "Acme/Widgets", "--project", str(tmp_path), check=True)
    again = installation.cli("review", "allow", "acme/widgets", "--json", "--project", str(tmp_path))
    assert again.returncode == 0 and json.loads(again.stdout)["summary"] == {
        "repository": "acme/widgets", "changed": False,
        "message": "Acme/Widgets is already on the review allowlist; nothing changed"}
