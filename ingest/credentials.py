"""What the ingest signs in to GitHub with: a GitHub App installation when the installation config names one,
else a personal token from GITHUB_TOKEN or GH_TOKEN.

    # $XDG_CONFIG_HOME/theurian/config.toml (the installation config, never a project's)
    [github_app]
    app_id = 123456
    installation_id = 7890123
    private_key_file = "theurian-reader.private-key.pem"   # a relative path is read from this file's folder

The config names the key's file, never the key. The file must be a regular file of at most MAX_KEY_FILE_BYTES,
readable and writable by its owner only — as ssh demands of a private key, any permission for the group or for
others (mode & 0o077) is refused — and hold an unencrypted RSA private key in PEM (what GitHub lets an app owner
download). An app named in the config is used even when a token is set too: it was configured on purpose, while a
GITHUB_TOKEN is often left in a shell for other tools. githubkit's AppInstallationAuthStrategy signs the JWT
(RS256, `iss` = the app id) and exchanges it for an installation token, renewed before it expires.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from ingest.errors import GitHubAppError, TokenMissingError
from theurian.errors import ConfigError, NotRegularFile
from theurian.files import read_opened
from theurian.installation import GITHUB_APP_KEY, installation_config_path, installation_setting

if TYPE_CHECKING:
    from githubkit import AppInstallationAuthStrategy

TOKEN_ENVS: Final = ("GITHUB_TOKEN", "GH_TOKEN")
# A token is sent as an HTTP header value: visible ASCII only (GitHub's tokens are letters, digits and '_').
TOKEN_PATTERN: Final = re.compile(r"[\x21-\x7e]+")
APP_SETTINGS: Final = ("app_id", "installation_id", "private_key_file")
# A 4096-bit RSA key in PEM is about 3.3 KB; anything far larger is not a key file.
MAX_KEY_FILE_BYTES: Final = 64 * 1024
# ssh's rule for a private key: nothing for the group, nothing for others.
KEY_FILE_FORBIDDEN_BITS: Final = 0o077
# GitHub's ids are positive 64-bit integers.
MAX_GITHUB_ID: Final = 2**63 - 1


@dataclass(frozen=True)
class AppInstallation:
    """A GitHub App installation to sign in as. `private_key` is the PEM text; it is never shown (repr included)."""

    app_id: int
    installation_id: int
    key_file: Path
    private_key: str = field(repr=False)

    def strategy(self) -> AppInstallationAuthStrategy:
        from githubkit import AppInstallationAuthStrategy  # about a second to import: only a client pays it

        return AppInstallationAuthStrategy(self.app_id, self.private_key, self.installation_id)

    def describe(self) -> str:
        return f"GitHub App {self.app_id}, installation {self.installation_id} (key {self.key_file})"


Credentials = str | AppInstallation


def token_from_env(env: Mapping[str, str]) -> str:
    """The token from GITHUB_TOKEN, else GH_TOKEN.

    Raises:
        TokenMissingError: neither is set (the message names both, never a value), or the one set holds a
            character no token has (a newline, say), which no HTTP header could carry.
    """
    for name in TOKEN_ENVS:
        if env.get(name, "").strip():
            token = env[name].strip()
            if TOKEN_PATTERN.fullmatch(token) is None:
                raise TokenMissingError(
                    f"{name} holds a character a GitHub token never has (a newline, another control character, "
                    "a space or a non-ASCII character); set it to the token alone"
                )
            return token
    raise TokenMissingError("no GitHub token: set GITHUB_TOKEN or GH_TOKEN (public read access is enough), "
                            f"or name a GitHub App in [{GITHUB_APP_KEY}] of {installation_config_path()}")


def credentials_from(env: Mapping[str, str]) -> Credentials:
    """The app installation the installation config names, else the token from the environment.

    Raises:
        ConfigError: `[github_app]` is not what it must be.
        GitHubAppError: its key file cannot be used.
        TokenMissingError: no app, and no usable token.
    """
    app = app_installation()
    return app if app is not None else token_from_env(env)


def app_installation() -> AppInstallation | None:
    """The `[github_app]` the installation config names, its key read and checked; None when there is none.

    Raises:
        ConfigError: the table lacks a setting, has an unknown one, or holds a value of the wrong kind.
        GitHubAppError: the key file cannot be used (see the module docstring).
    """
    table = installation_setting(GITHUB_APP_KEY)
    if table is None:
        return None
    where = f"{installation_config_path()}: [{GITHUB_APP_KEY}]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table ({', '.join(APP_SETTINGS)})")
    unknown = sorted(set(table) - set(APP_SETTINGS))
    missing = [name for name in APP_SETTINGS if name not in table]
    if unknown or missing:
        what = f"unknown setting {unknown[0][:40]!r}" if unknown else f"no {missing[0]}"
        raise ConfigError(f"{where} has {what}; it takes exactly {', '.join(APP_SETTINGS)}")
    ids = {}
    for name in ("app_id", "installation_id"):
        value = table[name]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_GITHUB_ID:
            raise ConfigError(f"{where} {name} must be a positive whole number (as GitHub shows it)")
        ids[name] = value
    path = table["private_key_file"]
    if not isinstance(path, str) or not path.strip():
        raise ConfigError(f"{where} private_key_file must be the path of the app's private key file (.pem)")
    key_file = (installation_config_path().parent / Path(path).expanduser()).absolute()
    return AppInstallation(ids["app_id"], ids["installation_id"], key_file, read_private_key(key_file))


def read_private_key(path: Path) -> str:
    """The PEM text of the RSA private key at `path`, after the checks the module docstring lists.

    Raises:
        GitHubAppError: missing, not a regular file, too open, too large, or not an unencrypted RSA key.
    """
    def owner_only(status: os.stat_result) -> None:
        mode = stat.S_IMODE(status.st_mode)
        if os.name == "posix" and mode & KEY_FILE_FORBIDDEN_BITS:
            raise GitHubAppError(f"the GitHub App's private key file {path} has mode {mode:04o}, open to other "
                                 f"users; a private key must be its owner's alone: chmod 600 {path}")

    try:  # links followed: a key is often linked from where secrets are kept
        data = read_opened(path, MAX_KEY_FILE_BYTES, follow_link=True, inspect=owner_only)
    except NotRegularFile as exc:
        if exc.too_large:
            raise GitHubAppError(f"{path} is larger than {MAX_KEY_FILE_BYTES} bytes: not a GitHub App private key "
                                 f"(at most {MAX_KEY_FILE_BYTES})") from None
        raise GitHubAppError(f"the GitHub App's private key file {path} is not a regular file") from None
    except OSError as exc:
        raise GitHubAppError(f"the GitHub App's private key file {path} cannot be opened ({exc.strerror})") from None
    return _rsa_pem(path, data)


def _rsa_pem(path: Path, data: bytes) -> str:
    try:
        key = load_pem_private_key(data, password=None)
    except TypeError:
        raise GitHubAppError(f"{path} holds an encrypted key; GitHub's app keys are not: use the .pem GitHub "
                             "gave you") from None
    except ValueError:
        raise GitHubAppError(f"{path} holds no PEM private key (GitHub gives an app's key as a .pem file "
                             "starting -----BEGIN RSA PRIVATE KEY-----)") from None
    if not isinstance(key, RSAPrivateKey):
        raise GitHubAppError(f"{path} holds a private key that is not RSA; GitHub signs apps in with RSA keys")
    return data.decode("latin-1")  # PEM is ASCII; latin-1 keeps any stray byte as it is
