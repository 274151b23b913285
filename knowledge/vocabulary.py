"""The knowledge vocabularies (READING-GUIDE.md) and the one RFC 3339 parser every timestamp goes through."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final

from theurian.installation import SENSITIVITY_LEVELS

STATUSES: Final = ("draft", "proposed", "approved", "deprecated", "superseded", "rejected")
# What a caller may see; the other three are "retired" and never counted or served.
SURFACEABLE_STATUSES: Final = ("approved", "draft", "proposed")
TRUST_LEVELS: Final = ("unverified", "inferred", "reviewed", "authoritative")
SENSITIVITIES: Final = SENSITIVITY_LEVELS
ITEM_KINDS: Final = (
    "architecture",
    "decision",
    "domain",
    "operations",
    "security",
    "testing",
    "api",
    "incident",
    "convention",
    "rejected-approach",
    "known-exception",
)
DEFAULT_SENSITIVITY: Final = "internal"
DEFAULT_TRUST_LEVEL: Final = "unverified"

# Date, "T", time, optional fraction of any length (RFC 3339's `time-secfrac = "." 1*DIGIT`; every caller bounds the
# string's length), and an explicit offset: Z or ±hh:mm. Nothing else is RFC 3339 here.
_RFC3339: Final = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def parse_rfc3339(text: str) -> datetime:
    """A timezone-aware datetime from an RFC 3339 timestamp with an explicit offset.

    Raises:
        ValueError: the text is not such a timestamp (no offset, not a real date, out of range).
    """
    if not _RFC3339.match(text):
        raise ValueError("not an RFC 3339 timestamp with an explicit offset")
    normalized = text.upper().replace("Z", "+00:00")
    if normalized[17:19] == "60":
        # A leap second (RFC 3339 allows second 60). datetime has no such second, so it reads as the last
        # microsecond of its minute at the same offset: after every :59 instant, before the next minute.
        offset = normalized[19:].lstrip(".0123456789")
        normalized = f"{normalized[:17]}59.999999{offset}"
    head, _, rest = normalized.partition(".")
    if rest:  # Python keeps microseconds only: cut a longer fraction before parsing.
        digits = re.match(r"\d+", rest)
        assert digits is not None
        normalized = f"{head}.{digits.group()[:6].ljust(6, '0')}{rest[digits.end() :]}"
    return datetime.fromisoformat(normalized)


def utc_key(moment: datetime) -> str:
    """A fixed-width UTC rendering that orders lexically as the moments order in time (for SQL comparison)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def disclosable(ceiling: str) -> tuple[str, ...]:
    """The sensitivities at or below `ceiling`, in order."""
    return SENSITIVITIES[: SENSITIVITIES.index(ceiling) + 1]
