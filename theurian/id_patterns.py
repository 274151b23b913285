"""The identifier patterns the JSON schemas under `schemas/` spell between `^` and `$`, each owned here once.

    ULID_PATTERN            a ULID as this build writes one (Crockford base 32, 26 upper-case characters): run,
                            build, migration and proposal ids, and the state and index files a build id names
    SHA256_HEX_PATTERN      a SHA-256 digest in lower-case hex: a state hash, a model's weights, a repository
                            folder's name (`sha256-<hex>`, `evidence.records.REPOSITORY_FOLDER_PATTERN`)
    SHA256_DIGEST_PATTERN   `sha256:` and that hex: a file's content hash (`evidence.records.content_hash`,
                            `knowledge.migrations.sha256_checksum`)
    FULL_COMMIT_SHA_PATTERN a full git commit id a caller sends (SHA-1's 40 or SHA-256's 64 hex digits, either
                            case); `full_commit_sha` folds one to the lower case git spells it in

A schema is JSON and cannot import a constant: tests/test_schema_patterns.py fails when a schema's copy, or a
regex anywhere in the code built around one, drifts from its owner here (and likewise for the record key, the
record path, the repository and the item id, owned by `evidence.records`, `projection.review_threads` and
`knowledge.candidate`).
"""

from __future__ import annotations

import re
from typing import Final

ULID_PATTERN: Final = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
SHA256_HEX_PATTERN: Final = re.compile(r"[0-9a-f]{64}")
SHA256_DIGEST_PATTERN: Final = re.compile(r"sha256:" + SHA256_HEX_PATTERN.pattern)
FULL_COMMIT_SHA_PATTERN: Final = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")


def full_commit_sha(value: str) -> str | None:
    """`value` in lower case when it is a full commit sha in either case, else None (a short sha, a ref name):
    the hex digits mean the same in either case, and git prints, and stores compare, the lower."""
    return value.lower() if FULL_COMMIT_SHA_PATTERN.fullmatch(value) else None
