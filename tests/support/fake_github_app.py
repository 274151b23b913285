"""The GitHub App side of the loopback fake GitHub: one app, one installation, the app's public key.

`POST /app/installations/{id}/access_tokens` checks the JWT it receives as GitHub does (RS256, signed by the app's
key, `iss` the app id, `exp` in the future and at most 10 minutes ahead) and answers in GitHub's recorded shapes
(fixtures/github/app/): 201 with a fresh installation token, 401 for a JWT it cannot verify, 404 for another
installation. A GraphQL request is admitted only with a live installation token (`Authorization: token …`).

Time: a token lives `lifetime` seconds of `clock` (a test's simulated clock, so an hour passes without waiting
one). Its `expires_at` on the wire is real time plus the lifetime, because githubkit turns `expires_at` into a
time to live against the real clock; the fake's own bookkeeping, and the client's cache, run on `clock`.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jwt

Node = dict[str, Any]
APP_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "github" / "app"
TOKEN_LIFETIME_SECONDS = 3600.0
MAX_JWT_AHEAD_SECONDS = 600
_EXCHANGE_PATH = re.compile(r"/app/installations/(?P<id>[0-9]+)/access_tokens")


def recorded(name: str) -> Node:
    answer: Node = json.loads((APP_FIXTURES / name).read_text(encoding="utf-8"))
    return answer


class SimulatedClock:
    """Seconds as `time.time` gives them, plus whatever a test has advanced."""

    def __init__(self) -> None:
        self.offset = 0.0

    def now(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


class FakeGitHubApp:
    """What the fake saw: `exchanges` (the claims of each JWT it accepted), `refusals` (why it refused one),
    `tokens` (each minted token's expiry on `clock`), `least_life_left` (the shortest life a token had when used)."""

    def __init__(self, *, app_id: int, installation_id: int, public_key_pem: bytes,
                 clock: Callable[[], float] = time.time, lifetime: float = TOKEN_LIFETIME_SECONDS) -> None:
        self.app_id, self.installation_id = app_id, installation_id
        self.public_key_pem, self.clock, self.lifetime = public_key_pem, clock, lifetime
        self.exchanges: list[Node] = []
        self.refusals: list[str] = []
        self.tokens: dict[str, float] = {}
        self.least_life_left: float | None = None
        self._lock = threading.Lock()

    def exchange(self, path: str, authorization: str) -> tuple[int, Node]:
        """The answer to `POST <path>` carrying `authorization`."""
        match = _EXCHANGE_PATH.fullmatch(path)
        claims = self._verified(authorization.removeprefix("Bearer ")) if authorization.startswith("Bearer ") \
            else None
        if claims is None:
            return 401, recorded("jwt-refused-401.json")
        if match is None or int(match["id"]) != self.installation_id:
            return 404, recorded("installation-not-found-404.json")
        token = "ghs_" + secrets.token_urlsafe(27)
        wire_expiry = datetime.now(UTC) + timedelta(seconds=self.lifetime)
        with self._lock:
            self.exchanges.append(claims)
            self.tokens[token] = self.clock() + self.lifetime
        return 201, recorded("access-token-201.json") | {
            "token": token, "expires_at": wire_expiry.strftime("%Y-%m-%dT%H:%M:%SZ")}

    def admits(self, authorization: str) -> bool:
        """Whether a GraphQL request with `authorization` carries a live installation token."""
        scheme, _, token = authorization.partition(" ")
        expiry = self.tokens.get(token) if scheme.lower() in ("token", "bearer") else None
        if expiry is None:
            return False
        left = expiry - self.clock()
        with self._lock:
            self.least_life_left = left if self.least_life_left is None else min(self.least_life_left, left)
        return left > 0

    def _verified(self, token: str) -> Node | None:
        try:
            header = jwt.get_unverified_header(token)
            claims: Node = jwt.decode(token, self.public_key_pem, algorithms=["RS256"],
                                      options={"require": ["iat", "exp", "iss"]})
        except jwt.PyJWTError as exc:
            self.refusals.append(type(exc).__name__)
            return None
        if header.get("alg") != "RS256" or str(claims["iss"]) != str(self.app_id):
            self.refusals.append(f"alg {header.get('alg')}, iss {claims['iss']!r}")
            return None
        if claims["exp"] - time.time() > MAX_JWT_AHEAD_SECONDS:
            self.refusals.append("exp too far ahead")
            return None
        return claims


def rsa_key_pair() -> tuple[bytes, bytes]:
    """A throwaway RSA key made for one test: (private key PEM, traditional as GitHub gives it; public key PEM)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public


def configure_app(config_dir: Path, key_pem: bytes, *, app_id: int, installation_id: int,
                  key_name: str = "app.private-key.pem", mode: int = 0o600) -> Path:
    """Write the key file (`mode`) and an installation config naming it under `[github_app]`; the key's path."""
    config_dir.mkdir(parents=True, exist_ok=True)
    key_file = config_dir / key_name
    key_file.write_bytes(key_pem)
    key_file.chmod(mode)
    (config_dir / "config.toml").write_text(
        f'[github_app]\napp_id = {app_id}\ninstallation_id = {installation_id}\nprivate_key_file = "{key_name}"\n',
        encoding="utf-8")
    return key_file
