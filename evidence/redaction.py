"""A record made safe to keep: secrets replaced by markers, participants by pseudonyms, redactions listed.

`screen` is the one function every writer of records calls (the ingest's gate, `review scan`): it scans every
text field of the record (every string but the identifiers, enums and times the schema pins), and under the
`redact` policy replaces each secret with `[REDACTED <type> <fingerprint>]`. The envelope's `redactions` is
then derived from the markers the record holds, so it is the same whichever run put them there: a thread's
comments kept from an earlier run keep their entries, and screening a screened record changes nothing (an
unchanged record re-fetched stays byte-identical). Pseudonyms are keyed the same way, by the project's salt.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from evidence.content_policy import SECRETS_BLOCK, SECRETS_OFF, SECRETS_REDACT, SECRETS_WARN, ContentPolicy
from theurian.secret_scan import MARKER_PATTERN, SecretHit, fingerprint, marker, scan_text

REDACTIONS_FIELD: Final = "redactions"
# What each policy does to a record (or a finding) holding a secret, in the words every account of it uses: an
# ingest's manifest, `review scan`, `findings build --json`.
SECRET_ACTIONS: Final = {SECRETS_REDACT: "redacted", SECRETS_BLOCK: "blocked", SECRETS_WARN: "warned"}
# Strings the schema pins to an identifier, an enum, a time or a URL GitHub made: never free text.
_NOT_TEXT: Final = frozenset({
    "formatVersion", "kind", "provider", "repository", "recordKey", "sourceUri", "url", "state",
    "authorAssociation", "createdAt", "updatedAt", "closedAt", "mergedAt", "submittedAt", "lastEditedAt",
    "mergeCommitOid", "baseRefOid", "headRefOid", "commitOid", "originalCommitOid", "statusCheckRollupState",
    "reviewKeys", "threadKeys", "replyToKey", "reviewKey", "reviewState", "fullDatabaseId", "missingUpstreamSince",
    "diffSide", "startDiffSide", "subjectType", "minimizedReason", "type", "id", REDACTIONS_FIELD,
    "login",  # GitHub's own pattern: 1-39 letters, digits and hyphens, a name (or a pseudonym), never a secret
})
ACTOR_FIELDS: Final = frozenset({"author", "mergedBy", "resolvedBy"})
PSEUDONYM_PREFIX: Final = "participant-"
PSEUDONYM_PATTERN: Final = re.compile(r"participant-[0-9a-f]{12}")


@dataclass(frozen=True)
class Finding:
    """One secret found in a field (never its value)."""

    field: str
    kind: str
    fingerprint: str

    def entry(self) -> dict[str, str]:
        return {"field": self.field, "type": self.kind, "fingerprint": self.fingerprint}


@dataclass(frozen=True)
class Screened:
    record: dict[str, Any]
    findings: tuple[Finding, ...]  # secrets this screening found in the text (markers already there are not)


def pseudonym(salt: bytes, actor: Mapping[str, Any]) -> str:
    """A participant's stable pseudonym: keyed by the salt over the node id (the login when there is none)."""
    identity = actor.get("id") or actor.get("login") or ""
    digest = hmac.new(salt, b"participant\x00" + str(identity).encode("utf-8"), hashlib.sha256).hexdigest()
    return PSEUDONYM_PREFIX + digest[:12]


def _pseudonymised(salt: bytes, actor: Any) -> Any:
    if not isinstance(actor, dict):
        return actor
    login = actor.get("login")
    if isinstance(login, str) and PSEUDONYM_PATTERN.fullmatch(login) and actor.get("id") in (login, None):
        return actor  # already a pseudonym: a second screening keeps it
    name = pseudonym(salt, actor)
    return actor | {"login": name, "id": name}


class _Screening:
    def __init__(self, policy: ContentPolicy) -> None:
        self.policy = policy
        self.findings: list[Finding] = []
        self.markers: list[Finding] = []

    def text(self, field: str, value: str) -> str:
        if self.policy.secrets != SECRETS_OFF:
            hits = [(hit, print_) for hit in scan_text(value)
                    if (print_ := fingerprint(self.policy.salt, hit.value)) not in self.policy.acknowledged]
            self.findings.extend(Finding(field, hit.kind, print_) for hit, print_ in hits)
            if hits and self.policy.secrets == SECRETS_REDACT:
                value = _replaced(value, hits)
        if "[REDACTED " in value:
            self.markers.extend(Finding(field, m[1], m[2]) for m in MARKER_PATTERN.finditer(value))
        return value

    def value(self, field: str, key: str, value: Any) -> Any:
        if key in ACTOR_FIELDS and self.policy.redact_participants:
            value = _pseudonymised(self.policy.salt, value)
        if isinstance(value, str):
            return value if key in _NOT_TEXT else self.text(field, value)
        if isinstance(value, dict):
            return {k: self.value(f"{field}.{k}", k, v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(_item_field(field, index, item), key, item) for index, item in enumerate(value)]
        return value


def _item_field(field: str, index: int, item: Any) -> str:
    key = item.get("recordKey") if isinstance(item, dict) else None
    return f"{field}[{key}]" if isinstance(key, str) else f"{field}[{index}]"


def _replaced(text: str, hits: list[tuple[SecretHit, str]]) -> str:
    for hit, print_ in sorted(hits, key=lambda pair: pair[0].start, reverse=True):
        text = text[:hit.start] + marker(hit.kind, print_) + text[hit.end:]
    return text


def screen(record: Mapping[str, Any], policy: ContentPolicy) -> Screened:
    """`record` as `policy` keeps it (a new dict; `record` is not changed), and the secrets found in it.

    Under `redact` the secrets are replaced; under `block`, `warn` and `off` the text is left as it is (the
    caller leaves a blocked record out). Participants are pseudonymised when the policy says so, whatever the
    secrets policy. `redactions` lists every marker the result holds, sorted, and is absent when there is none.
    """
    screening = _Screening(policy)
    screened = {key: screening.value(key, key, value) for key, value in record.items()}
    entries = sorted({(f.field, f.kind, f.fingerprint): f for f in screening.markers}.values(),
                     key=lambda f: (f.field, f.kind, f.fingerprint))
    screened.pop(REDACTIONS_FIELD, None)
    if entries:
        screened[REDACTIONS_FIELD] = [f.entry() for f in entries]
    return Screened(screened, tuple(screening.findings))
