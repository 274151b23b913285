"""The local access token: the one secret a client must present (`Authorization: Bearer <token>`) on every MCP
route of this installation's daemon.

It lives in the installation's state folder (`mcp-token`, mode 0600), never inside a project, and is created on
first use. `rotate()` replaces it atomically; a running daemon reads it through `TokenFile`, which notices the
replacement on the next request, so the old token stops working at once and no restart is needed (and which never
creates it: while the file is gone, no token is accepted). Client
scripts take it from `THEURIAN_MCP_TOKEN` when set (`client_token`), else from the file.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from theurian import installation
from theurian.durable import create_private_file_once, write_bytes_durably
from theurian.errors import ConfigError, NotRegularFile
from theurian.files import read_opened

TOKEN_NAME: Final = "mcp-token"  # noqa: S105 - a file name, not a secret
TOKEN_ENV: Final = "THEURIAN_MCP_TOKEN"  # noqa: S105 - an environment variable's name
TOKEN_MODE: Final = 0o600
_TOKEN_BYTES: Final = 32
# secrets.token_urlsafe(32): 43 characters of the URL-safe base64 alphabet, nothing a header could mangle.
TOKEN_PATTERN: Final = re.compile(r"^[A-Za-z0-9_-]{43}$")
MAX_TOKEN_FILE_BYTES: Final = 4096  # a token is 43 characters; anything far past that is not one


def token_path() -> Path:
    return installation.state_dir() / TOKEN_NAME


def current_token() -> str:
    """This installation's token, created (mode 0600) when there is none yet.

    Raises:
        ConfigError: the file exists but holds something this program never wrote, or cannot be read.
    """
    path = token_path()
    try:
        return _read(path)
    except FileNotFoundError:
        _create(path)
        return _read(path)


def existing_token() -> str | None:
    """This installation's token, or None when the file is absent; never creates it. For the commands that change
    nothing (`doctor`, `setup --client`): while the file is gone a running daemon accepts no token, so a token
    made by one of them would undo a revocation (docs/daemon.md).

    Raises:
        ConfigError: the file exists but holds something this program never wrote, or cannot be read.
    """
    try:
        return _read(token_path())
    except FileNotFoundError:
        return None


def rotate() -> str:
    """Replace the token with a new one (atomically, mode 0600) and return it; the old one is void at once."""
    path = token_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(_TOKEN_BYTES)
    write_bytes_durably(path, f"{token}\n".encode("ascii"), mode=TOKEN_MODE)
    return token


def client_token(environ: Mapping[str, str]) -> str:
    """The token a client script should send: `THEURIAN_MCP_TOKEN` when set and not empty, else the file's."""
    return environ.get(TOKEN_ENV) or current_token()


def matches(presented: bytes, expected: str) -> bool:
    """Constant-time comparison: the time taken never says how much of a guess was right."""
    return hmac.compare_digest(presented, expected.encode("ascii"))


class TokenFile:
    """The daemon's view of the token file: re-read whenever the file was replaced, so a rotation takes effect
    on the very next request. A stat per request is all a request costs while the file is unchanged."""

    def __init__(self) -> None:
        self.path = token_path()
        self._seen: tuple[int, int, int] | None = None
        self._token: str | None = None

    def token(self) -> str | None:
        """The token in force now; None while the file is gone (docs/daemon.md: no token is accepted then).

        A running daemon never creates the file: one made here would be a token no client holds, locking every
        client out without a word. Removing it by hand revokes the old token; `theurian auth rotate` (or `auth
        token`) writes the next one, taken up on the next request.

        Raises:
            ConfigError: the file cannot be read or is damaged.
        """
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            self._seen = self._token = None
            return None
        seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if seen != self._seen or self._token is None:
            self._token = _read(self.path)
            self._seen = seen
        return self._token


def _read(path: Path) -> str:
    """The token in `path`; FileNotFoundError passes through for the caller to create one."""
    try:
        # Bounded and never waited on: a FIFO or /dev/zero put at the token's name must not hang every request.
        text = read_opened(path, MAX_TOKEN_FILE_BYTES, follow_link=True).decode("ascii").strip()
    except FileNotFoundError:
        raise
    except NotRegularFile as exc:
        raise ConfigError(f"cannot read the access token {path}: {exc.reason}; "
                          "`theurian auth rotate` writes a new one") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the access token {path}: {_reason(exc)}; "
                          "`theurian auth rotate` writes a new one") from exc
    if not TOKEN_PATTERN.match(text):
        raise ConfigError(f"the access token {path} is damaged; `theurian auth rotate` writes a new one")
    return text


def _create(path: Path) -> None:
    create_private_file_once(path, f"{secrets.token_urlsafe(_TOKEN_BYTES)}\n".encode("ascii"))


def _reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
