"""The knowledge vocabularies (READING-GUIDE.md). `parse_rfc3339` is the kernel's (`theurian.times`), named here for
the knowledge readers that import it from this module."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

from theurian.installation import SENSITIVITY_LEVELS
from theurian.times import parse_rfc3339 as parse_rfc3339

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


def utc_key(moment: datetime) -> str:
    """A fixed-width UTC rendering that orders lexically as the moments order in time (for SQL comparison)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def disclosable(ceiling: str) -> tuple[str, ...]:
    """The sensitivities at or below `ceiling`, in order."""
    return SENSITIVITIES[: SENSITIVITIES.index(ceiling) + 1]
