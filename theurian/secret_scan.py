"""Secrets in text, found by detect-secrets' token-family plugins, as whole spans a caller can redact.

detect-secrets scans one line and reports a type and a value, and the value is often only the part its pattern
anchors on (`ghp` for a GitHub token, the header words of a private key). Here each hit becomes a span of the
text: the value's occurrence widened to the whole token around it, a private key from its BEGIN line to its END
line, and a token a line break split in two joined back before it is scanned. Only the token-family plugins run
(docs/secrets.md says why and what they cost): the entropy plugins flag ordinary review prose and commit shas.

The plugins are configured once per process, and detect-secrets' settings are process-global, so every scan
holds one lock.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

PLUGINS: Final = (
    "AWSKeyDetector", "AzureStorageKeyDetector", "BasicAuthDetector", "DiscordBotTokenDetector",
    "GitHubTokenDetector", "GitLabTokenDetector", "JwtTokenDetector", "NpmDetector", "OpenAIDetector",
    "PrivateKeyDetector", "SendGridDetector", "SlackDetector", "StripeDetector", "TwilioKeyDetector",
)
# Ours (theurian/secret_plugins.py), for the families the 1.5.0 plugins miss; loaded by detect-secrets from the file.
CUSTOM_PLUGINS: Final = ("GitHubFineGrainedTokenDetector", "NpmAccessTokenDetector")
# Named, not imported: importing it imports detect-secrets, which every CLI start would then pay (~175 ms).
_CUSTOM_PATH: Final = "file://" + str(Path(__file__).with_name("secret_plugins.py").resolve())
# detect-secrets' type names → the short names a marker, an envelope and a report use.
TYPE_NAMES: Final = {
    "AWS Access Key": "aws-access-key",
    "Azure Storage Account access key": "azure-storage-key",
    "Basic Auth Credentials": "basic-auth-password",
    "Discord Bot Token": "discord-bot-token",
    "GitHub Token": "github-token",
    "GitHub Fine-Grained Token": "github-fine-grained-token",
    "GitLab Token": "gitlab-token",
    "JSON Web Token": "json-web-token",
    "NPM tokens": "npm-token",
    "NPM Access Token": "npm-token",  # the same credential as the `.npmrc` one, found anywhere
    "OpenAI Token": "openai-token",
    "Private Key": "private-key",
    "SendGrid API Key": "sendgrid-key",
    "Slack Token": "slack-token",
    "Stripe Access Key": "stripe-key",
    "Twilio API Key": "twilio-key",
}
PRIVATE_KEY: Final = "private-key"
# A line is handed to detect-secrets only when it could hold a token (`_could_hold_token`): a run of 16 word
# characters or `+/=.-` (the plugins' `\d` is any digit, as Python reads it) that holds a capital or `_` (every
# family's own pattern requires one: AKIA, ghp_, sk_live_, SG., AC/SK, AccountKey=, github_pat_, npm_, Discord's
# M/N/O, OpenAI's T3BlbkFJ) or a GitLab prefix (`glpat-` and kin), or any such run on a line naming `aws` (its
# quoted 40-character secret may be lowercase letters, digits, `/` and `+`); npm's `_authToken`, the start of a
# Slack token or a JWT (each can come shorter than 16); a private-key header; or a URL with a password. A superset,
# never a detector: it only spares the scanner the lines none of its plugins could match (a test generates every
# plugin's matches to hold it so). The run test matters: a dotted lowercase identifier (`architecture.rule-12`,
# every knowledge item id) cost ~0.2 ms in the plugins, which `migrate apply` paid for every item's title; a
# lowercase path (`git://backend/src/retry.py`, nearly every source anchor's URI) passed while `/` counted, and
# cost `migrate apply` 2.8 s at 30,000 items.
_RUN: Final = 16
_MARKERS: Final = ("eyJ", "_authToken", "PRIVATE KEY", "PuTTY-User-Key")  # the alternatives that are plain text
_URL_START: Final = "://"  # where a URL with a password starts
_SLACK_START: Final = "xox"  # where a Slack token starts, in any case
_CANDIDATE: Final = re.compile(
    rf"(?P<run>[\w+/=.-]{{{_RUN},}})|(?i:{_SLACK_START}[a-z]-)|{'|'.join(map(re.escape, _MARKERS))}"
    rf"|{_URL_START}[^\s/@]*:[^\s/@]*@"
)
# A Slack token's `xox?-` start inside a run: the run, found first, would otherwise hide it from `_CANDIDATE`'s own
# alternative (`xoxa-0-0-0-0-0-0` is all lowercase, digits and dashes).
_TOKEN_SHAPED: Final = re.compile(r"[A-Z_]|gl[a-z]{1,6}-|(?i:xox[a-z]-)")
_RUN_NAMING_LINE: Final = ("aws",)  # a line naming it may hold a lowercase-only secret run (AWS's quoted one)
# A token's characters to the right of the anchor (base64 padding, a JWT's dots); to its left only the ones a
# prefix is made of, so `token=` or a URL path before a token stays.
_TOKEN_CHAR: Final = re.compile(r"[A-Za-z0-9_+/=.~-]")
_PREFIX_CHAR: Final = re.compile(r"[A-Za-z0-9_-]")
_HEAD: Final = re.compile(r"\s*([A-Za-z0-9_+/=.~-]+)")
_TAIL: Final = re.compile(r"([A-Za-z0-9_+/=.~-]+)\s*$")
_KEY_BLOCK_END: Final = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|---- END SSH2 [A-Z ]*KEY ----")
_KEY_BLOCK_BEGIN: Final = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d+")
# A split token is looked for only where the two halves could make one (the shortest family's token is 20).
_MIN_JOINED: Final = 20
FINGERPRINT_HEX: Final = 16
MARKER_PATTERN: Final = re.compile(r"\[REDACTED ([a-z0-9-]+) ([0-9a-f]{16})\]")

_lock = threading.Lock()
_configured = False


@dataclass(frozen=True)
class SecretHit:
    """One secret: `text[start:end]` is the whole of it; `kind` is a TYPE_NAMES value."""

    start: int
    end: int
    kind: str
    value: str


def _configure() -> None:
    global _configured
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import cache_bust, configure_settings_from_baseline

    cache_bust()
    plugins = [{"name": name} for name in PLUGINS] + [{"name": name, "path": _CUSTOM_PATH} for name in CUSTOM_PLUGINS]
    configure_settings_from_baseline({"plugins_used": plugins})
    # Its class map is cached apart from the settings (cache_bust leaves it): one built before the custom
    # plugins were configured would not know them.
    get_mapping_from_secret_type_to_class.cache_clear()
    _configured = True


def _scan_line(line: str) -> list[tuple[str, str]]:
    from detect_secrets.core.scan import scan_line

    return [(TYPE_NAMES.get(s.type, _slug(s.type)), s.secret_value or "") for s in scan_line(line)]


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "secret"


def _widen(line: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and _PREFIX_CHAR.fullmatch(line[start - 1]):
        start -= 1
    while end < len(line) and _TOKEN_CHAR.fullmatch(line[end]):
        end += 1
    while end > start + 1 and line[end - 1] == ".":  # a sentence's full stop is not part of the token
        end -= 1
    return start, end


def _spans_in_line(line: str, kind: str, value: str) -> list[tuple[int, int]]:
    """Where `value` stands in `line`, each occurrence widened to its whole token (a password in a URL is
    already whole: its neighbours `:` and `@` are not token characters). A value running on past the token (the
    npm plugin's pattern takes the rest of the line) is cut at its first blank."""
    value = value.split()[0] if value.strip() else ""
    spans, at = [], line.find(value) if value else -1
    while at >= 0:
        spans.append(_widen(line, at, at + len(value)))
        at = line.find(value, at + len(value))
    return spans or [(0, len(line))]  # a value the line does not hold verbatim: the line is the secret's span


def _key_block(text: str, line_start: int, line_end: int) -> tuple[int, int]:
    """A private key from its BEGIN line to its END line (to the end of the text when it has none); a header
    the pattern here does not know starts the block at its line's start."""
    begin = _KEY_BLOCK_BEGIN.search(text, line_start, line_end)
    start = begin.start() if begin is not None else line_start
    end = _KEY_BLOCK_END.search(text, start)
    return start, end.end() if end is not None else len(text)


def scan_text(text: str) -> list[SecretHit]:
    """Every secret in `text`, as non-overlapping spans in order (overlapping hits are merged; the earlier
    hit's kind names the merged span)."""
    if not _could_hold_token(text):
        return []
    hits: list[SecretHit] = []
    with _lock:
        if not _configured:
            _configure()
        offset = 0
        lines = text.split("\n")
        for number, line in enumerate(lines):
            if _could_hold_token(line):
                hits.extend(_line_hits(text, line, offset))
            if number + 1 < len(lines):
                hits.extend(_split_hits(line, lines[number + 1], offset))
            offset += len(line) + 1
    return _merged(text, hits)


def _could_hold_token(text: str) -> bool:
    """Whether any plugin could match in `text` (see `_CANDIDATE`): one pass over its runs and fixed markers."""
    if not _may_hold_candidate(text):
        return False
    lowered = None
    for found in _CANDIDATE.finditer(text):
        run = found.group("run")
        if run is None or _TOKEN_SHAPED.search(run):
            return True
        lowered = lowered if lowered is not None else text.lower()
        if any(name in lowered for name in _RUN_NAMING_LINE):
            return True
    return False


def _may_hold_candidate(text: str) -> bool:
    """False only when `_CANDIDATE` cannot match in `text`: no word between whitespace is 16 characters long (a run
    holds no whitespace, so it lies inside one such word) and no fixed marker is there. Python's `re` tries each
    of `_CANDIDATE`'s alternatives at every position, 30 us for a 500-character body; this is 4 us, and most
    prose and most knowledge bodies stop here."""
    if any(marker in text for marker in _MARKERS) or _URL_START in text or _SLACK_START in text.lower():
        return True
    return any(len(word) >= _RUN for word in text.split())


def _line_hits(text: str, line: str, offset: int) -> list[SecretHit]:
    found = []
    for kind, value in _scan_line(line):
        if kind == PRIVATE_KEY:
            start, end = _key_block(text, offset, offset + len(line))
            found.append(SecretHit(start, end, kind, text[start:end]))
            continue
        for start, end in _spans_in_line(line, kind, value):
            found.append(SecretHit(offset + start, offset + end, kind, line[start:end]))
    return found


def _split_hits(line: str, following: str, offset: int) -> list[SecretHit]:
    """A token a line break cut in two: the end of `line` and the start of `following` joined, scanned, and
    kept only when the hit straddles the break."""
    tail, head = _TAIL.search(line), _HEAD.match(following)
    if tail is None or head is None or len(tail[1]) + len(head[1]) < _MIN_JOINED:
        return []
    joined, cut = tail[1] + head[1], len(tail[1])
    hits = _scan_line(joined) if _could_hold_token(joined) else []
    if not hits:
        return []
    found = []
    whole = {kind for kind, _ in _scan_line(tail[1]) + _scan_line(head[1])}  # found in its own line already
    for kind, value in hits:
        if kind in whole:
            continue
        for start, end in _spans_in_line(joined, kind, value):
            if start < cut < end and kind != PRIVATE_KEY:
                begin = offset + tail.start(1) + start
                finish = offset + len(line) + 1 + head.start(1) + (end - cut)
                found.append(SecretHit(begin, finish, kind, joined[start:end]))
    return found


def _merged(text: str, hits: list[SecretHit]) -> list[SecretHit]:
    merged: list[SecretHit] = []
    for hit in sorted(hits, key=lambda h: (h.start, -h.end)):
        if merged and hit.start < merged[-1].end:
            last = merged[-1]
            end = max(last.end, hit.end)
            merged[-1] = SecretHit(last.start, end, last.kind, text[last.start:end].replace("\n", ""))
        else:
            merged.append(hit)
    return merged


def fingerprint(salt: bytes, value: str) -> str:
    """The secret's fingerprint: HMAC-SHA256 keyed by the project's salt, 16 hex digits. The same secret
    has the same fingerprint everywhere the salt is shared; the value cannot be read back from it."""
    return hmac.new(salt, b"secret\x00" + value.encode("utf-8"), hashlib.sha256).hexdigest()[:FINGERPRINT_HEX]


def marker(kind: str, print_: str) -> str:
    """What stands in the text where a secret was: its kind and fingerprint (never the value)."""
    return f"[REDACTED {kind} {print_}]"


def line_of(text: str, at: int) -> int:
    """The 1-based line number of offset `at` in `text`."""
    return text.count("\n", 0, at) + 1
