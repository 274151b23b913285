"""The local access token's file: made once, private, replaced whole by a rotation, and read by the daemon afresh."""

from __future__ import annotations

import stat

import pytest

from tests.support.cli_app import invoke
from tests.support.installation import Installation
from theurian import access_token
from theurian.access_token import TOKEN_ENV, TOKEN_PATTERN, TokenFile
from theurian.errors import ConfigError
from theurian.installation import state_dir


def test_the_token_is_created_once_in_the_installation_state_readable_by_its_owner_only() -> None:
    first = access_token.current_token()
    assert TOKEN_PATTERN.match(first)
    path = access_token.token_path()
    assert path.parent == state_dir()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert access_token.current_token() == first


def test_a_rotation_replaces_the_token_keeping_the_file_private() -> None:
    old = access_token.current_token()
    new = access_token.rotate()
    assert new != old and access_token.current_token() == new
    assert stat.S_IMODE(access_token.token_path().stat().st_mode) == 0o600


def test_the_daemons_view_follows_a_rotation_on_the_next_read() -> None:
    view = TokenFile()
    old = view.token()
    new = access_token.rotate()
    assert view.token() == new != old


def test_a_damaged_token_file_is_refused_with_its_cure() -> None:
    access_token.current_token()
    access_token.token_path().write_text("short\n", encoding="ascii")
    with pytest.raises(ConfigError, match="is damaged; `theurian auth rotate` writes a new one"):
        access_token.current_token()
    with pytest.raises(ConfigError, match="is damaged"):
        TokenFile().token()


def test_a_client_script_takes_the_token_from_the_environment_first() -> None:
    assert access_token.client_token({TOKEN_ENV: "from-env"}) == "from-env"
    assert access_token.client_token({}) == access_token.current_token()
    assert access_token.client_token({TOKEN_ENV: ""}) == access_token.current_token()


def test_the_comparison_tells_a_wrong_token_of_any_length_from_the_right_one() -> None:
    token = access_token.current_token()
    assert access_token.matches(token.encode(), token)
    for wrong in (token[:-1], token + "x", "", ("A" if token[0] != "A" else "B") + token[1:]):
        assert not access_token.matches(wrong.encode(), token)


def test_auth_token_warns_when_others_can_read_the_file_and_still_prints_the_token_alone(
        isolated_home: Installation) -> None:
    token = access_token.current_token()
    path = access_token.token_path()
    path.chmod(0o644)
    exposed = invoke(["auth", "token"])
    assert (exposed.exit_code, exposed.stdout) == (0, f"{token}\n")  # `$(theurian auth token)` still works
    assert exposed.stderr == f"theurian: warning: {path} is mode 644: others can read the token; `chmod 600 {path}`\n"
    path.chmod(0o600)
    private = invoke(["auth", "token"])
    assert (private.exit_code, private.stdout, private.stderr) == (0, f"{token}\n", "")
