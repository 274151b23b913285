"""The installation's own files: the project registry, the installation config, and the build-stamp secret.

They live under the user's XDG config and state directories, never inside a project. Setting
`THEURIAN_HOME` relocates all of them under one folder (`$THEURIAN_HOME/config`, `$THEURIAN_HOME/state`), which
is how tests keep away from the real home directory.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Final

from theurian.durable import create_private_file_once
from theurian.errors import ConfigError, NotRegularFile
from theurian.files import MAX_CONFIG_FILE_BYTES, read_opened, read_toml
from theurian.text import quoted

HOME_OVERRIDE_ENV: Final = "THEURIAN_HOME"
APP_DIR_NAME: Final = "theurian"
INSTALLATION_CONFIG_NAME: Final = "config.toml"
REGISTRY_NAME: Final = "projects.toml"
SECRET_NAME: Final = "build-stamp.key"  # noqa: S105 - a file name, not a secret
SECRET_BYTES: Final = 32

SENSITIVITY_LEVELS: Final = ("public", "internal", "confidential", "restricted")
DEFAULT_DISCLOSURE_CEILING: Final = "internal"
EMBEDDING_MODEL_KEY: Final = "embedding_model"
GITHUB_APP_KEY: Final = "github_app"  # a table: the GitHub App the ingest signs in as (ingest/credentials.py)
INSTALLATION_CONFIG_KEYS: Final = frozenset({"disclosure_ceiling", EMBEDDING_MODEL_KEY, GITHUB_APP_KEY})


def config_dir() -> Path:
    """The folder holding the registry and the installation config.

    Raises:
        ConfigError: THEURIAN_HOME is set to a relative path.
    """
    override = _home_override()
    if override is not None:
        return override / "config"
    return xdg_base("XDG_CONFIG_HOME", Path(".config")) / APP_DIR_NAME


def state_dir() -> Path:
    """The folder holding the installation's private state (the build-stamp secret).

    Raises:
        ConfigError: THEURIAN_HOME is set to a relative path.
    """
    override = _home_override()
    if override is not None:
        return override / "state"
    return xdg_base("XDG_STATE_HOME", Path(".local") / "state") / APP_DIR_NAME


def xdg_base(variable: str, under_home: Path) -> Path:
    """The XDG base folder `variable` names, else `under_home` in the home folder. A relative value is ignored, as
    the XDG Base Directory spec says: read against the current folder, each folder would see its own files."""
    value = os.environ.get(variable, "")
    return Path(value) if os.path.isabs(value) else Path.home() / under_home


def _home_override() -> Path | None:
    override = os.environ.get(HOME_OVERRIDE_ENV)
    if not override:
        return None
    if not os.path.isabs(override):  # refused, not ignored: the variable exists to keep a run off the real home
        raise ConfigError(f"{HOME_OVERRIDE_ENV} {quoted(override)} is not an absolute path, so each folder a command "
                          "runs in would have an installation of its own; set it to an absolute path (e.g. "
                          "/some/dir), or unset it")
    return Path(override)


def registry_path() -> Path:
    return config_dir() / REGISTRY_NAME


def installation_config_path() -> Path:
    return config_dir() / INSTALLATION_CONFIG_NAME


def disclosure_ceiling() -> str:
    """The highest sensitivity this installation will ever disclose.

    One word under `disclosure_ceiling` in the installation config; `internal` when the file or the key is absent.

    Raises:
        ConfigError: the file cannot be read (not a regular file, past MAX_CONFIG_FILE_BYTES, not UTF-8), is not
            TOML, or the word is not a sensitivity level.
    """
    path = installation_config_path()
    value = _installation_config(path).get("disclosure_ceiling", DEFAULT_DISCLOSURE_CEILING)
    if value not in SENSITIVITY_LEVELS:
        shown = repr(value) if isinstance(value, str) and len(value) <= 40 else "that value"
        raise ConfigError(
            f"{path}: disclosure_ceiling {shown} is not one of {', '.join(SENSITIVITY_LEVELS)}; "
            "set one of those words (or remove the key for the default, internal)"
        )
    return str(value)


def embedding_model_dir() -> Path | None:
    """The local model folder the installation config names under `embedding_model`, or None for the bundled one.

    A relative path is read from the config's own folder. The folder itself is checked when it is loaded
    (`theurian.embedding.load_model`).

    Raises:
        ConfigError: the file is not TOML, or the value is not a non-empty string.
    """
    path = installation_config_path()
    value = _installation_config(path).get(EMBEDDING_MODEL_KEY)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{path}: {EMBEDDING_MODEL_KEY} must be the path of a local model folder")
    return (path.parent / Path(value).expanduser()).absolute()


def installation_setting(key: str) -> object | None:
    """The value the installation config holds under `key` (one of INSTALLATION_CONFIG_KEYS), or None; its reader
    checks it.

    Raises:
        ConfigError: the file is not TOML, or holds an unknown key.
    """
    return _installation_config(installation_config_path()).get(key)


def _installation_config(path: Path) -> dict[str, object]:
    try:  # a link followed: a dotfile manager links the installation's files from where it keeps them
        document = read_toml(path, MAX_CONFIG_FILE_BYTES, str(path), follow_link=True)
    except FileNotFoundError:
        return {}
    unknown = sorted(set(document) - INSTALLATION_CONFIG_KEYS)
    if unknown:
        # A misspelt key would otherwise leave the daemon at the default ceiling, maybe wider than intended.
        known = ", ".join(sorted(INSTALLATION_CONFIG_KEYS))
        raise ConfigError(f"{path}: unknown key {quoted(unknown[0])}; the keys are: {known}")
    return document


def build_stamp_secret() -> bytes:
    """This installation's secret for build stamps, created (mode 0600) on first use.

    Raises:
        ConfigError: the secret file exists but is not a secret this program wrote.
    """
    path = state_dir() / SECRET_NAME
    try:
        secret = read_opened(path, SECRET_BYTES, follow_link=True)
    except FileNotFoundError:
        return _create_secret(path)
    except (NotRegularFile, OSError):
        secret = b""  # a FIFO there would otherwise hold every command and the daemon for good
    if len(secret) != SECRET_BYTES:
        raise ConfigError(f"{path} is damaged (expected {SECRET_BYTES} bytes); remove it and rebuild every store")
    return secret


def _create_secret(path: Path) -> bytes:
    create_private_file_once(path, secrets.token_bytes(SECRET_BYTES))  # a racing process's secret wins whole
    return build_stamp_secret()
