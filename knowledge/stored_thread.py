"""The stored review records a knowledge candidate is drafted from, as the values `knowledge/` receives them.

`projection.review_threads` looks them up in the verified review store and reads them from the lake, checking each
file's bytes against the hash the store's stamp covers; the CLI and the daemon hand the values here. Knowledge never
opens the review store: these protocols name what it reads of them, and nothing more.
"""

from __future__ import annotations

from typing import Any, Protocol


class StoredRecordValue(Protocol):
    """One record file as the store vouches for it."""

    @property
    def record_path(self) -> str:
        """Relative to .theurian/review/, as review.search publishes it."""
        ...

    @property
    def content_hash(self) -> str:
        """`sha256:` of the file's bytes: the bytes the build read."""
        ...

    @property
    def record(self) -> dict[str, Any]: ...


class StoredThreadValue(Protocol):
    """A review thread (or, as a concern's member, a review submission) and its pull request."""

    @property
    def thread(self) -> StoredRecordValue: ...

    @property
    def pull_request(self) -> StoredRecordValue | None:
        """None when the store holds no record of the thread's pull request."""
        ...
