"""The evidence package's exception tree.

    TheurianError (theurian.errors)
    └── EvidenceError                 the lake cannot be read or written as asked (1)
        ├── RecordKeyError            a record key fails the strict pattern; nothing is named after it
        ├── RecordInvalidError        a record does not validate against its schema
        ├── LakeBusyError             another ingest is writing this lake
        └── SaltRefusedError          the salt is lost or is not the one the lake was keyed by

An entry the lake's readers will not read (a link out of the lake, a FIFO, too large) is the kernel's
`NotRegularFile` (`theurian.errors`; `reason`, which a build reports beside the path and skips, and `too_large`),
named here too for those readers. Each carries the offending key or path as an attribute, never the record's text.
"""

from __future__ import annotations

from theurian.errors import NotRegularFile as NotRegularFile  # the kernel's (theurian.files), named here too
from theurian.errors import TheurianError


class EvidenceError(TheurianError):
    """The evidence lake cannot be read or written as asked."""


class RecordKeyError(EvidenceError):
    """A record key does not match the strict pattern that lets it name a file."""

    def __init__(self, message: str, *, key: str) -> None:
        super().__init__(message)
        self.key = key


class RecordInvalidError(EvidenceError):
    """A record (or run manifest) does not validate against its schema.

    `path` is the record's path relative to the review folder when it came from a file, else "".
    """

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class LakeBusyError(EvidenceError):
    """Another ingest holds this project's lake: two at once would sweep each other's staged files."""


class SaltRefusedError(EvidenceError):
    """The project's salt is not the one its lake was keyed by: gone (`.theurian/review.salt` lost while the lake
    or `[review] acknowledged_secrets` records it) or another one. `problem` and `cure` are the message's halves,
    which `theurian doctor` shows as a failed check's state and cure."""

    def __init__(self, problem: str, cure: str) -> None:
        super().__init__(f"{problem}: {cure}; nothing was written")
        self.problem = problem
        self.cure = cure
