"""Which salt keyed the lake: the `saltFingerprint` each run manifest records, and the fingerprint of a salt.

The ingest writes the fingerprint of the salt it keyed its records by into its run's manifest, and `review scan`
adds it to every manifest that has none (after a scan, every record those manifests list is keyed by that salt).
The newest manifest that records one says which salt keys the lake now: a deliberate re-key
(`review ingest --rekey`) is a newer run naming the new one. A lake written before fingerprints were recorded names
none, and is treated as it always was. The fingerprint is SHA-256 over a fixed label and the salt's 32 random
bytes, 16 hex digits: enough to tell two salts apart, and nothing about the salt can be read back from it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from evidence.lake_runs import newest_manifests

SALT_FINGERPRINT_FIELD: Final = "saltFingerprint"
_LABEL: Final = b"theurian review.salt fingerprint\x00"
_FINGERPRINT_HEX: Final = 16


def salt_fingerprint(salt: bytes) -> str:
    """The salt's fingerprint as a manifest records it (16 hex digits)."""
    return hashlib.sha256(_LABEL + salt).hexdigest()[:_FINGERPRINT_HEX]


@dataclass(frozen=True)
class LakeKey:
    """The fingerprint the lake's newest manifest recording one names, and that run's id."""

    fingerprint: str
    run_id: str


def lake_key(project_root: Path) -> LakeKey | None:
    """The salt the lake says it is keyed by (its newest run manifest recording a fingerprint), or None for a lake
    that records none (empty, or written before fingerprints were recorded). Reads the valid manifests newest first
    and stops at the first recording one (`evidence.lake_runs.newest_manifests`; one it skips records nothing), so
    the old runs' record lists are not read once a newer run has recorded the key.

    Raises:
        PathEscapeError: `.theurian/review` or its `runs` folder resolves outside the project.
    """
    for manifest in newest_manifests(project_root):
        key = _recorded(manifest)
        if key is not None:
            return key
    return None


def key_of(manifests: Sequence[Mapping[str, Any]]) -> LakeKey | None:
    """`lake_key` of manifests already read (valid ones, oldest run first, as `read_manifests` gives them)."""
    for manifest in reversed(manifests):  # oldest first: run ids are ULIDs
        key = _recorded(manifest)
        if key is not None:
            return key
    return None


def records_key(manifest: Mapping[str, Any]) -> bool:
    """Whether `manifest` records a salt fingerprint (so no older manifest decides `lake_key`)."""
    return _recorded(manifest) is not None


def _recorded(manifest: Mapping[str, Any]) -> LakeKey | None:
    fingerprint = manifest.get(SALT_FINGERPRINT_FIELD)
    return LakeKey(fingerprint, str(manifest["runId"])) if isinstance(fingerprint, str) else None
