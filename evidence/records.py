"""The evidence record format: kinds, keys, file names, canonical bytes and thread-state derivation.

A record is a JSON object: an envelope (`formatVersion`, `kind`, `provider`, `repository`, `recordKey`,
`pullRequest`, `sourceUri`) plus the fetched node, connections flattened to lists. The format is described for
people in `docs/evidence-format.md` and for programs in `schemas/evidence/`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import orjson

from evidence.errors import RecordKeyError
from theurian.text import ascii_fold

FORMAT_VERSION: Final = 1
PROVIDER_GITHUB: Final = "github"

KIND_PULL_REQUEST: Final = "pull-request"
KIND_REVIEW_SUBMISSION: Final = "review-submission"
KIND_REVIEW_THREAD: Final = "review-thread"
KINDS: Final = (KIND_PULL_REQUEST, KIND_REVIEW_SUBMISSION, KIND_REVIEW_THREAD)

THREAD_OPEN: Final = "open"
THREAD_RESOLVED: Final = "resolved"
THREAD_OUTDATED: Final = "outdated"
THREAD_DISMISSED: Final = "dismissed"
THREAD_STATES: Final = (THREAD_OPEN, THREAD_RESOLVED, THREAD_OUTDATED, THREAD_DISMISSED)

# GitHub node ids ("next" global ids, which the client asks for) use letters, digits, '_' and '-'; '=' is
# admitted for legacy base64 ids. Nothing else may name a file, and a leading '.' or '-' never can.
RECORD_KEY_PATTERN: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_=-]{0,199}")
FILE_NAME_PATTERN: Final = re.compile(
    r"(?P<key>[A-Za-z0-9_][A-Za-z0-9_=-]{0,199})\.(?P<mask>0|[1-9a-f][0-9a-f]*)\.json"
)
# GitHub's rules for OWNER/NAME, ASCII only (its names are ASCII, and its case-insensitive matching folds ASCII
# letters only): an owner of 1-39 letters, digits and '-', not starting with '-'; a name of 1-100 letters, digits,
# '.', '_' and '-' that is not '.' or '..' (both reserved). The one pattern: the allowlist checks what an operator
# types with it, the lake what a record names; the evidence schemas spell it between ^ and $ (a test pins them).
REPOSITORY_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/(?!\.\.?$)[A-Za-z0-9._-]{1,100}")
REPOSITORY_FOLDER_PATTERN: Final = re.compile(r"sha256-[0-9a-f]{64}")


def validate_record_key(key: object) -> str:
    """Return `key` if it is a record key that may name a file.

    Raises:
        RecordKeyError: the key is not a string matching RECORD_KEY_PATTERN.
    """
    if not isinstance(key, str) or RECORD_KEY_PATTERN.fullmatch(key) is None:
        shown = key[:40] if isinstance(key, str) else type(key).__name__
        message = f"record key {shown!r} does not match the record key pattern"
        raise RecordKeyError(message, key=str(key)[:200])
    return key


def case_mask(key: str) -> str:
    """Lower-case hex of the bit set whose bit i is 1 when character i of `key` is an upper-case letter.

    Two keys that differ only in case get different masks, so `<key>.<mask>.json` names stay distinct on a
    file system that folds case (macOS, Windows) while the key itself stays readable.
    """
    mask = sum(1 << index for index, char in enumerate(key) if "A" <= char <= "Z")
    return format(mask, "x")


def record_file_name(key: str) -> str:
    """The file name of a record: `<key>.<case mask>.json`, after validating the key."""
    validate_record_key(key)
    return f"{key}.{case_mask(key)}.json"


def key_from_file_name(name: str) -> str | None:
    """The record key a file name encodes, or None if the name is not a well-formed record file name."""
    match = FILE_NAME_PATTERN.fullmatch(name)
    if match is None or case_mask(match["key"]) != match["mask"]:
        return None
    return match["key"]


def fold_repository(repository: str) -> str:
    """OWNER/NAME with ASCII letters lower-cased and nothing else changed: GitHub's own case-insensitive
    matching. Never `str.casefold()`, which folds U+212A KELVIN SIGN to 'k' and so would make a name GitHub
    does not have equal to one it has. For every valid name (ASCII only, REPOSITORY_PATTERN) the two agree, so
    the folder names written before this function existed are unchanged."""
    return ascii_fold(repository)


def repository_folder(repository: str) -> str:
    """`sha256-<hex>` of "github:" + owner/name ASCII-folded: one folder per repository, any spelling."""
    digest = hashlib.sha256(f"{PROVIDER_GITHUB}:{fold_repository(repository)}".encode()).hexdigest()
    return f"sha256-{digest}"


def canonical_bytes(record: Mapping[str, Any]) -> bytes:
    """orjson with sorted keys, two-space indent and a final newline: equal records give equal bytes."""
    return orjson.dumps(record, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def content_hash(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def clean_text(value: str) -> str:
    """Replace lone UTF-16 surrogates (legal in JSON text, not in UTF-8) with U+FFFD; keep everything else."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def derive_thread_state(*, is_resolved: bool, is_outdated: bool, first_review_state: str | None) -> str:
    """A thread's state, in this precedence: dismissed, resolved, outdated, open.

    `dismissed`: the review that opened the thread (its first comment's review) was dismissed, so the
    feedback was withdrawn whatever happened to the thread afterwards. `resolved` wins over `outdated` because
    a fix that moves the code makes its thread outdated, and the resolution is the stronger signal.
    """
    if first_review_state == "DISMISSED":
        return THREAD_DISMISSED
    if is_resolved:
        return THREAD_RESOLVED
    if is_outdated:
        return THREAD_OUTDATED
    return THREAD_OPEN


def merge_comments(
    fetched: Sequence[Mapping[str, Any]], stored: Sequence[Mapping[str, Any]], *, run_id: str
) -> list[dict[str, Any]]:
    """A thread's comment list after a fetch: every fetched comment, plus every stored comment upstream no
    longer has, marked `missingUpstreamSince` (the run that first missed it; an earlier mark is kept).

    Ordered by (createdAt, recordKey), so the result does not depend on the order pages arrived in.
    """
    fetched_keys = {comment["recordKey"] for comment in fetched}
    merged = [dict(comment) for comment in fetched]
    for comment in stored:
        if comment["recordKey"] in fetched_keys:
            continue
        kept = dict(comment)
        kept.setdefault("missingUpstreamSince", run_id)
        merged.append(kept)
    merged.sort(key=lambda c: (c["createdAt"], c["recordKey"]))
    return merged
