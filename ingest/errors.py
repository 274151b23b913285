"""The ingest package's exception tree.

    TheurianError (theurian.errors)
    └── IngestError                   an ingest cannot go on (1)
        ├── NotAllowlistedError       a repository is not on the project's allowlist (SEC-10); no request made
        ├── TokenMissingError         neither GITHUB_TOKEN nor GH_TOKEN is set, or the one set cannot be a token
        ├── RepositoryRefusedError    GitHub answers the repository as private or internal, or not at all
        ├── GitHubError               GitHub refused a request, or the retry policy gave up; `status` if HTTP
        │   └── GitHubNotFoundError   GraphQL answered NOT_FOUND (the node or repository is not visible)
        ├── GitHubAppError            the configured GitHub App cannot sign in (key file, or GitHub's refusal)
        └── UpstreamShapeError        GitHub answered a node this ingest cannot read or store (a field missing
                                      or null, a value the evidence schema refuses); the run fails, the others go on

    Exception
    └── RetryableFailure              one attempt failed in a way another may fix (`wait`, `status`): the signal
                                      between the client and the retry policy, never raised out of `ingest.retry`

Messages name what happened (status, GraphQL error type, rate-limit reset) and never carry the token or a
request's headers. `UsageError` (from the kernel) covers a malformed OWNER/NAME.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from evidence.errors import RecordInvalidError, RecordKeyError
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


@contextmanager
def reading_github(what: str) -> Iterator[None]:
    """Where an answer of GitHub's is read or turned into a record: a field GitHub's schema promises that is missing
    or null (KeyError, TypeError), or a record the evidence schema refuses, is GitHub's answer at fault — said so,
    naming `what`. Kept to those places, so that a damaged lake file or a bug of ours is never blamed on GitHub.

    Raises:
        UpstreamShapeError: translated from the above.
    """
    try:
        yield
    except (RecordInvalidError, RecordKeyError) as exc:
        raise UpstreamShapeError(f"GitHub answered {what} this ingest will not store: {exc.message}") from exc
    except (KeyError, TypeError) as exc:
        raise UpstreamShapeError(
            f"GitHub's answer for {what} lacks a field this ingest reads ({type(exc).__name__}: {str(exc)[:200]})"
        ) from exc


class GitHubNotFoundError(GitHubError):
    """GraphQL answered NOT_FOUND: the node or repository does not exist or is not visible to this token."""


class GitHubAppError(IngestError):
    """The GitHub App named in the installation config cannot sign in: its key file cannot be used, or GitHub
    refused the app's JSON web token or the installation. `status` is the HTTP status when GitHub answered."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class RetryableFailure(Exception):  # noqa: N818 - a signal to the retry policy, not an error that leaves it
    """One attempt failed in a way another attempt may fix.

    `wait` is the wait GitHub asked for (rate limits), or None to back off exponentially.
    """

    def __init__(self, reason: str, *, wait: float | None = None, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait
        self.status = status
