"""`theurian review allow` re-run: a set-up step whose work is done exits 0 and says so, changing nothing."""

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


def test_disallowing_a_repository_not_allowed_still_exits_already_in_place(installation: Installation,
                                                                          tmp_path: Path) -> None:
    installation.cli("init", str(tmp_path), check=True)
    again = installation.cli("review", "disallow", "acme/widgets", "--project", str(tmp_path))
    assert again.returncode == 4 and again.stderr.strip() == (
        "theurian: acme/widgets is not on the review allowlist")
