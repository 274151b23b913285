"""The ingest package's exception tree.

    TheurianError (theurian.errors)
    └── IngestError                   an ingest cannot go on (1)
        ├── NotAllowlistedError       a repository is not on the project's allowlist (SEC-10); no request made
        ├── TokenMissingError         neither GITHUB_TOKEN nor GH_TOKEN is set, or the one set cannot be a token
        ├── RepositoryRefusedError    GitHub answers the repository as private or internal, or not at all
        ├── GitHubError               GitHub refused a request, or the retry policy gave up; `status` if HTTP
        └── UpstreamShapeError        GitHub answered a node this ingest cannot read or store (a field missing
                                      or null, a value the evidence schema refuses); the run fails, the others go on

Messages name what happened (status, GraphQL error type, rate-limit reset) and never carry the token or a
request's headers. `UsageError` (from the kernel) covers a malformed OWNER/NAME.
"""

from __future__ import annotations

from theurian.errors import TheurianError


class IngestError(TheurianError):
    """An ingest cannot go on."""


class NotAllowlistedError(IngestError):
    """A repository is not on the allowlist; refused before any network call."""

    def __init__(self, message: str, *, repository: str) -> None:
        super().__init__(message)
        self.repository = repository


class TokenMissingError(IngestError):
    """No usable GitHub token in the environment (none set, or one holding a newline or other such character)."""


class RepositoryRefusedError(IngestError):
    """GitHub answers the repository as not public (or not at all); nothing of it is written."""

    def __init__(self, message: str, *, repository: str) -> None:
        super().__init__(message)
        self.repository = repository


class GitHubError(IngestError):
    """GitHub refused a request, or retrying gave up. `status` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class UpstreamShapeError(IngestError):
    """GitHub answered a node this ingest cannot read or store: the repository's run fails, named, and the
    invocation goes on to the next repository."""
