"""What a project asks of the text it keeps: `[review]` in `.theurian/config.toml`, and the salt beside the lake.

This module also owns the config file's whole shape (`PROJECT_CONFIG_KEYS`): every reader parses it with
`parse_config`, which refuses a table or key no module reads, so a typo is never silently a default.

    [review]
    allowlist = []                  # read by ingest.allowlist
    secrets = "redact"              # "redact" (default) | "block" | "warn" | "off"
    redact_participants = false     # true: author logins and ids become stable keyed pseudonyms
    acknowledged_secrets = []       # fingerprints an operator has checked and knows are not secrets

The salt (`.theurian/review.salt`, 32 random bytes as hex) keys secret fingerprints and participant pseudonyms.
It is source, like the lake: whoever shares the lake shares it, so everyone's redactions give the same bytes. It
is made once, by the first command that needs it, written whole beside it and then linked into place
(`theurian.durable.create_file_once`): two racing makers keep one, and no reader ever sees it empty.
"""

from __future__ import annotations

import os
import re
import secrets as random_source
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from evidence.records import REPOSITORY_FOLDER_PATTERN
from theurian.containment import resolve_inside
from theurian.durable import create_file_once
from theurian.errors import ConfigError, NotRegularFile
from theurian.files import MAX_CONFIG_FILE_BYTES as MAX_CONFIG_FILE_BYTES  # a project's config is a few lines too
from theurian.files import read_opened, read_text, toml_document
from theurian.project import CONFIG_FILE, REVIEW_DIR, THEURIAN_DIR
from theurian.text import MAX_SHOWN_CHARS, escaped, quoted

SECRETS_REDACT: Final = "redact"
SECRETS_BLOCK: Final = "block"
SECRETS_WARN: Final = "warn"
SECRETS_OFF: Final = "off"
SECRETS_POLICIES: Final = (SECRETS_REDACT, SECRETS_BLOCK, SECRETS_WARN, SECRETS_OFF)
DEFAULT_SECRETS_POLICY: Final = SECRETS_REDACT
SALT_FILE: Final = f"{THEURIAN_DIR}/review.salt"
# Every table a project's config may hold and every key any module reads from it (`allowlist` is read by
# ingest.allowlist, the rest here). A misspelt `redact_participant` would otherwise leave real logins in the lake.
PROJECT_CONFIG_KEYS: Final[dict[str, frozenset[str]]] = {
    "review": frozenset({"allowlist", "secrets", "redact_participants", "acknowledged_secrets"}),
}
_SALT_TEXT: Final = re.compile(r"[0-9a-f]{64}\n?")
_MAX_SALT_FILE_BYTES: Final = 1024  # a salt is 65 bytes: anything much larger is not one, and is not read whole
_FINGERPRINT: Final = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class ContentPolicy:
    secrets: str = DEFAULT_SECRETS_POLICY
    redact_participants: bool = False
    acknowledged: frozenset[str] = frozenset()
    salt: bytes = b""


def config_text(path: Path) -> str:
    """The config file's text, read without blocking on what is not a regular file and bounded
    (`theurian.files.read_text`, at MAX_CONFIG_FILE_BYTES).

    Raises:
        FileNotFoundError: nothing is there.
        ConfigError: not a regular file, too large, or not UTF-8.
    """
    text = read_text(path, MAX_CONFIG_FILE_BYTES, CONFIG_FILE)
    # Line endings read as `open()` reads text (a hand edit on Windows leaves CRLF): the rewrite matches lines.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_config(text: str) -> dict[str, Any]:
    """The project config's document, its shape checked against PROJECT_CONFIG_KEYS.

    Raises:
        ConfigError: not TOML, or a table or key no module reads (one line naming it and the known ones).
    """
    document = toml_document(text, CONFIG_FILE)
    tables = ", ".join(f"[{name}]" for name in sorted(PROJECT_CONFIG_KEYS))
    for name, table in document.items():
        if name not in PROJECT_CONFIG_KEYS:
            shown = f"[{escaped(name)}]" if len(name) <= MAX_SHOWN_CHARS else quoted(name)
            raise ConfigError(f"{CONFIG_FILE}: unknown table {shown}; the tables are: {tables}")
        if not isinstance(table, dict):
            raise ConfigError(f"{CONFIG_FILE}: {name} must be a table ([{name}]); edit it by hand")
        unknown = sorted(set(table) - PROJECT_CONFIG_KEYS[name])
        if unknown:
            known = ", ".join(sorted(PROJECT_CONFIG_KEYS[name]))
            raise ConfigError(f"{CONFIG_FILE}: unknown key {quoted(unknown[0])} in [{name}]; the keys are: {known}")
    return document


def _review_table(project_root: Path) -> dict[str, Any]:
    path = resolve_inside(project_root, CONFIG_FILE)
    try:
        text = config_text(path)
    except FileNotFoundError:
        return {}
    review: dict[str, Any] = parse_config(text).get("review", {})
    return review


def read_policy(project_root: Path, *, make_salt: bool = True) -> ContentPolicy:
    """The project's content policy, its salt made if it has none yet (`make_salt=False`: left empty instead,
    for a caller that must write nothing outside its own folder).

    Raises:
        ConfigError: a `[review]` value this policy cannot use (the message names the key and what it takes).
    """
    review = _review_table(project_root)
    secrets = review.get("secrets", DEFAULT_SECRETS_POLICY)
    if secrets not in SECRETS_POLICIES:
        raise ConfigError(f'{CONFIG_FILE}: [review] secrets must be one of "redact", "block", "warn", "off" '
                          '(default "redact"); edit it by hand')
    participants = review.get("redact_participants", False)
    if not isinstance(participants, bool):
        raise ConfigError(f"{CONFIG_FILE}: [review] redact_participants must be true or false; edit it by hand")
    acknowledged = review.get("acknowledged_secrets", [])
    if not isinstance(acknowledged, list) or not all(
        isinstance(item, str) and _FINGERPRINT.fullmatch(item) for item in acknowledged
    ):
        raise ConfigError(f"{CONFIG_FILE}: [review] acknowledged_secrets must be a list of 16-hex-digit "
                          "fingerprints (as a refusal or `review scan` names them); edit it by hand")
    salt = project_salt(project_root) if make_salt or salt_exists(project_root) else b""
    return ContentPolicy(secrets, participants, frozenset(acknowledged), salt)


def lake_holds_records(project_root: Path) -> bool:
    """Whether the lake has a repository folder (each holds the records one allowlisted repository gave)."""
    try:
        with os.scandir(resolve_inside(project_root, REVIEW_DIR)) as entries:
            return any(REPOSITORY_FOLDER_PATTERN.fullmatch(entry.name) for entry in entries)
    except (FileNotFoundError, NotADirectoryError):
        return False


def salt_exists(project_root: Path) -> bool:
    return os.path.lexists(resolve_inside(project_root, SALT_FILE))


def project_salt(project_root: Path) -> bytes:
    """The project's salt, made (whole, once: `create_file_once`) when there is none.

    Raises:
        ConfigError: the salt file exists but does not hold 64 lower-case hex digits.
    """
    path = resolve_inside(project_root, SALT_FILE)
    if not os.path.lexists(path):
        create_file_once(path, (random_source.token_hex(32) + "\n").encode("ascii"), mode=0o644)  # source: 0644
    try:
        text = read_opened(path, _MAX_SALT_FILE_BYTES).decode("ascii")
    except (NotRegularFile, UnicodeDecodeError, OSError):
        text = ""
    if not _SALT_TEXT.fullmatch(text):
        raise ConfigError(f"{SALT_FILE} does not hold a salt (64 lower-case hex digits); restore it from where "
                          "the lake is kept (it keys every fingerprint and pseudonym the lake holds)")
    return bytes.fromhex(text[:64])
