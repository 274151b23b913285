"""The one RFC 3339 parser every timestamp Theurian reads goes through: knowledge's `validFrom`/`asOf`, GitHub's
`updatedAt`, a run manifest's `startedAt`/`finishedAt`/`window`, and `review ingest --since`.

Strict: a date, "T", a time and an explicit offset (Z or ±hh:mm). A JSON schema's `format: date-time` is only an
annotation, so a lake that arrives by clone can hold "2026-01-01" where a timestamp belongs; Python's
`fromisoformat` reads that as a naive datetime, and comparing it with an aware one raises TypeError far from
the file. Every reader here refuses it at the parse instead.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final

# Date, "T", time, optional fraction of any length (RFC 3339's `time-secfrac = "." 1*DIGIT`; every caller bounds the
# string's length), and an explicit offset: Z or ±hh:mm. Nothing else is RFC 3339 here.
_RFC3339: Final = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_DATE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")
NOT_RFC3339: Final = "not an RFC 3339 timestamp with an explicit offset"


def parse_rfc3339(text: str) -> datetime:
    """A timezone-aware datetime from an RFC 3339 timestamp with an explicit offset.

    Raises:
        ValueError: the text is not such a timestamp (no offset, not a real date, out of range).
    """
    if not _RFC3339.match(text):
        raise ValueError(NOT_RFC3339)
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


def parse_date_or_rfc3339(text: str) -> datetime:
    """A timezone-aware datetime from a calendar date (YYYY-MM-DD, read as its midnight UTC) or an RFC 3339
    timestamp with an explicit offset: what an operator may type for a moment.

    Raises:
        ValueError: neither (a time without an offset among them: which zone it meant is a guess).
    """
    if _DATE.match(text):
        return datetime.fromisoformat(text).replace(tzinfo=UTC)
    return parse_rfc3339(text)
