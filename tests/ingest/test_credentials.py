"""Which credentials the ingest uses: the installation config's [github_app] (its key file checked as ssh checks a
private key) before a token, each refusal one line naming what to fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from ingest.credentials import (
    MAX_GITHUB_ID,
    MAX_KEY_FILE_BYTES,
    AppInstallation,
    app_installation,
    credentials_from,
    read_private_key,
)
from ingest.errors import GitHubAppError, TokenMissingError
from tests.support.fake_github_app import configure_app, rsa_key_pair
from tests.support.installation import Installation
from theurian.errors import ConfigError
from theurian.installation import installation_config_path


@pytest.fixture(scope="module")
def key_pem() -> bytes:
    return rsa_key_pair()[0]


def _config(text: str) -> None:
    path = installation_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_no_app_configured_means_the_token_from_the_environment(installation: Installation) -> None:
    assert app_installation() is None
    assert credentials_from({"GITHUB_TOKEN": "ghp_x"}) == "ghp_x"
    with pytest.raises(TokenMissingError) as raised:
        credentials_from({})
    assert "[github_app]" in raised.value.message


def test_a_configured_app_is_used_even_with_a_token_set_and_never_shows_its_key(
        installation: Installation, key_pem: bytes) -> None:
    key_file = configure_app(installation_config_path().parent, key_pem, app_id=12, installation_id=34)
    app = credentials_from({"GITHUB_TOKEN": "ghp_x"})
    assert isinstance(app, AppInstallation)
    assert (app.app_id, app.installation_id, app.key_file) == (12, 34, key_file)
    assert app.private_key.encode() == key_pem
    assert "PRIVATE KEY" not in repr(app) and "PRIVATE KEY" not in app.describe()


@pytest.mark.parametrize("mode", [0o600, 0o400])
def test_a_key_file_its_owner_alone_can_read_is_accepted(tmp_path: Path, key_pem: bytes, mode: int) -> None:
    path = tmp_path / "key.pem"
    path.write_bytes(key_pem)
    path.chmod(mode)
    assert read_private_key(path).encode() == key_pem


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")
@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o610, 0o601])
def test_a_key_file_open_to_the_group_or_others_is_refused_as_ssh_refuses_one(
        tmp_path: Path, key_pem: bytes, mode: int) -> None:
    path = tmp_path / "key.pem"
    path.write_bytes(key_pem)
    path.chmod(mode)
    with pytest.raises(GitHubAppError) as raised:
        read_private_key(path)
    assert f"mode {mode:04o}" in raised.value.message and f"chmod 600 {path}" in raised.value.message
    assert "\n" not in raised.value.message


def test_a_key_file_at_the_size_bound_is_read_and_one_byte_past_it_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "key.pem"
    path.write_bytes(b"x" * MAX_KEY_FILE_BYTES)
    path.chmod(0o600)
    with pytest.raises(GitHubAppError, match="holds no PEM private key"):
        read_private_key(path)
    path.write_bytes(b"x" * (MAX_KEY_FILE_BYTES + 1))
    with pytest.raises(GitHubAppError, match=f"not a GitHub App private key \\(at most {MAX_KEY_FILE_BYTES}\\)"):
        read_private_key(path)


def _pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey, password: bytes | None = None) -> bytes:
    encryption = (serialization.BestAvailableEncryption(password) if password
                  else serialization.NoEncryption())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


@pytest.mark.parametrize("content, says", [
    (lambda: b"not a key\n", "holds no PEM private key"),
    (lambda: _pem(ec.generate_private_key(ec.SECP256R1())), "not RSA"),
    (lambda: _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048), b"pass"), "encrypted"),
], ids=["not a key", "an EC key", "an encrypted key"])
def test_a_key_file_that_is_not_an_unencrypted_rsa_key_is_refused(
        tmp_path: Path, content: object, says: str) -> None:
    path = tmp_path / "key.pem"
    path.write_bytes(content())  # type: ignore[operator]
    path.chmod(0o600)
    with pytest.raises(GitHubAppError, match=says):
        read_private_key(path)


def test_a_missing_key_file_or_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(GitHubAppError, match="cannot be opened"):
        read_private_key(tmp_path / "absent.pem")
    with pytest.raises(GitHubAppError, match="not a regular file"):
        read_private_key(tmp_path)


@pytest.mark.parametrize("table, says", [
    ("app_id = 1\ninstallation_id = 2\n", "no private_key_file"),
    ('app_id = 1\ninstallation_id = 2\nprivate_key_file = "k.pem"\nprivate_key = "-----BEGIN"\n',
     "unknown setting 'private_key'"),
    ('app_id = true\ninstallation_id = 2\nprivate_key_file = "k.pem"\n', "app_id must be a positive whole number"),
    ('app_id = 1\ninstallation_id = 0\nprivate_key_file = "k.pem"\n', "installation_id must be a positive"),
    ('app_id = "1"\ninstallation_id = 2\nprivate_key_file = "k.pem"\n', "app_id must be a positive"),
    (f'app_id = {MAX_GITHUB_ID + 1}\ninstallation_id = 2\nprivate_key_file = "k.pem"\n', "app_id must be"),
    ('app_id = 1\ninstallation_id = 2\nprivate_key_file = ""\n', "private_key_file must be the path"),
], ids=["a setting missing", "the key itself in the config", "a bool id", "a zero id", "a string id",
        "an id past 64 bits", "an empty path"])
def test_a_github_app_table_that_is_not_what_it_must_be_is_refused_naming_the_setting(
        installation: Installation, table: str, says: str) -> None:
    _config("[github_app]\n" + table)
    with pytest.raises(ConfigError) as raised:
        app_installation()
    assert says in raised.value.message and str(installation_config_path()) in raised.value.message


def test_an_id_at_the_64_bit_bound_is_accepted(installation: Installation, key_pem: bytes) -> None:
    configure_app(installation_config_path().parent, key_pem, app_id=MAX_GITHUB_ID, installation_id=1)
    app = app_installation()
    assert app is not None and app.app_id == MAX_GITHUB_ID


def test_a_github_app_that_is_not_a_table_is_refused(installation: Installation) -> None:
    _config('github_app = "123"\n')
    with pytest.raises(ConfigError, match="must be a table"):
        app_installation()
