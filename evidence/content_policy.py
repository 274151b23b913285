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
(`theurian.durable.create_file_once`): two racing makers keep one, and no reader ever sees it empty. It is never
made again over what an earlier one keyed: where the lake's manifests record a salt fingerprint
(`evidence.salt_key`) or `[review] acknowledged_secrets` lists fingerprints, a missing salt is refused
(`SaltRefusedError`), and `lake_salt` — what a command that keys the lake reads — also refuses a salt whose
fingerprint is not the lake's (one copied from another project). `rekey=True` (`review ingest --rekey`) is the
operator's deliberate new key.
"""

from __future__ import annotations

import os
import re
import secrets as random_source
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from evidence.errors import SaltRefusedError
from evidence.records import REPOSITORY_FOLDER_PATTERN
from evidence.salt_key import LakeKey, key_of, lake_key, salt_fingerprint
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


def read_policy(project_root: Path, *, make_salt: bool = True, rekey: bool = False,
                manifests: Sequence[Mapping[str, Any]] | None = None) -> ContentPolicy:
    """The project's content policy. `make_salt=True` (a command about to key the lake): its salt as `lake_salt`
    gives it (made if there is none yet; refused if lost or not the lake's; `rekey` and `manifests` as there).
    `make_salt=False`: the salt read if there is one, else left empty, for a caller that must write nothing
    outside its own folder (and, on a read path, must not read every manifest).

    Raises:
        ConfigError: a `[review]` value this policy cannot use (the message names the key and what it takes).
        SaltRefusedError: `make_salt`, and the salt is lost or another project's (`lake_salt`).
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
    if make_salt:
        salt = lake_salt(project_root, rekey=rekey, manifests=manifests)
    else:
        salt = project_salt(project_root) if salt_exists(project_root) else b""
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


def project_salt(project_root: Path, *, rekey: bool = False) -> bytes:
    """The project's salt, made (whole, once: `create_file_once`) when there is none — unless something keyed by
    a salt is there (`refuse_lost_salt`; `rekey=True` makes it anyway).

    Raises:
        ConfigError: the salt file exists but does not hold 64 lower-case hex digits.
        SaltRefusedError: there is none, and the lake or the config holds what a lost one keyed.
    """
    path = resolve_inside(project_root, SALT_FILE)
    if not os.path.lexists(path):
        if not rekey:
            refuse_lost_salt(project_root, lake_key(project_root))
        create_file_once(path, (random_source.token_hex(32) + "\n").encode("ascii"), mode=0o644)  # source: 0644
    try:
        text = read_opened(path, _MAX_SALT_FILE_BYTES).decode("ascii")
    except (NotRegularFile, UnicodeDecodeError, OSError):
        text = ""
    if not _SALT_TEXT.fullmatch(text):
        raise ConfigError(f"{SALT_FILE} does not hold a salt (64 lower-case hex digits); restore it from where "
                          "the lake is kept (it keys every fingerprint and pseudonym the lake holds)")
    return bytes.fromhex(text[:64])


_REKEY: Final = "`theurian review ingest --rekey`"
_NOT_REMADE: Final = ("restore it from the backup or the clone the lake came from (a new salt would give the same "
                      "people new pseudonyms and the same secrets new fingerprints)")


def refuse_lost_salt(project_root: Path, key: LakeKey | None) -> None:
    """Refuse to make a salt over what a lost one keyed: a lake whose manifests record a salt fingerprint (`key`,
    as `evidence.salt_key.lake_key` reads it), or `[review] acknowledged_secrets` (fingerprints only a salt
    gives). A lake that records none (written before fingerprints were) and an empty list let a first salt be
    made, as always.

    Raises:
        SaltRefusedError: naming the file, what holds the old key, and the cure.
    """
    if key is not None:
        raise SaltRefusedError(
            f"{SALT_FILE} is missing, but the lake was keyed by a salt (fingerprint {key.fingerprint}, recorded by "
            f"run {key.run_id})", f"{_NOT_REMADE}; to key the lake by a new salt deliberately, {_REKEY}")
    acknowledged = _review_table(project_root).get("acknowledged_secrets")
    if isinstance(acknowledged, list) and acknowledged:
        raise SaltRefusedError(
            f"{SALT_FILE} is missing, but [review] acknowledged_secrets in {CONFIG_FILE} lists fingerprints it keyed",
            f"{_NOT_REMADE}; or, to start a new salt, take those fingerprints out of {CONFIG_FILE}")


def lake_salt(project_root: Path, *, rekey: bool = False,
              manifests: Sequence[Mapping[str, Any]] | None = None) -> bytes:
    """The salt a command that keys the lake uses: `project_salt`, and refused when its fingerprint is not the
    one the lake's newest manifest recording one names. `rekey=True`: the salt there (made if missing) is taken
    as the lake's key from now on; the run that writes it records it. `manifests`: the lake's, already read by
    the caller (`evidence.lake_runs.read_manifests`), so a large lake's are not read twice.

    Raises:
        ConfigError: the salt file is damaged.
        SaltRefusedError: it is missing over a keyed lake, or it is not the lake's.
    """
    if rekey:
        return project_salt(project_root, rekey=True)
    key = lake_key(project_root) if manifests is None else key_of(manifests)
    if not salt_exists(project_root):
        refuse_lost_salt(project_root, key)
    salt = project_salt(project_root, rekey=True)  # what a lost salt keyed was refused just above
    if key is not None and key.fingerprint != (own := salt_fingerprint(salt)):
        raise SaltRefusedError(
            f"{SALT_FILE} is not the salt the lake was keyed by (its fingerprint is {own}; run {key.run_id} "
            f"recorded {key.fingerprint})",
            f"restore the project's own salt from the backup; to key the lake by this one from now on, {_REKEY}")
    return salt


def salt_refusal(project_root: Path) -> SaltRefusedError | None:
    """Why the next command that keys the lake would refuse the salt, or None; writes nothing (`theurian doctor`).

    Raises:
        ConfigError: the config or the salt file is damaged.
    """
    try:
        if salt_exists(project_root):
            lake_salt(project_root)
        else:
            refuse_lost_salt(project_root, lake_key(project_root))
    except SaltRefusedError as exc:
        return exc
    return None
