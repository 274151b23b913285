"""The projection package's exception tree: the stores it builds, and why one cannot be built or served.

    TheurianError (theurian.errors)
    ├── ReviewStoreUnavailable            the review store cannot be served: `reason` (absent, superseded, damaged,
    │   │                                 foreign, unreadable) for logs and tests; callers show one constant
    │   └── ReviewStorePathUnsupported    its resolved path holds what DuckDB cannot open a database through
    ├── ReviewExportUnwritable            the export's target refused a write (full, quota, read-only, size limit)
    ├── FindingsStoreUnavailable          the findings store cannot be served: `reason`, as above
    ├── ReviewLakeNotAFolder              `.theurian/review` exists but is not a folder (the build refuses)
    ├── ReviewStoreIsAFolder              a folder sits where the review store is published
    ├── LakeChangedDuringBuildError       a record file the build took over changed or vanished while it ran
    ├── GitHistoryError                   the project's history cannot be read through git (findings build)
    ├── ThreadNotAvailableError           no stored review thread under that repository and recordKey
    ├── ConcernNotAvailableError          no concern under that concernId in the store built now
    ├── SituationWithoutWords             a review.findSimilar situation holds no word to compare by
    └── PathEscapeError (theurian.errors)
        └── ReviewStoreEscapeError        the review store's path resolves outside `.theurian/state/`

`theurian.errors.StampRejected` (a stamp row this installation did not make, `reason`) is what each store's
reader turns into its own Unavailable error.

The serve tools and the CLI answer each of these with the wording the contract gives it (`serve/tools/`), and the
cure for an escaping place is `theurian.places`'s.
"""

from __future__ import annotations

from typing import Final

from theurian.errors import PathEscapeError, TheurianError
from theurian.project_path import DUCKDB_MISREADS


class ReviewStoreUnavailable(TheurianError):  # noqa: N818 - it names a state, as the refusal does
    """The store cannot be served. `reason` is for logs and tests; a caller is shown one constant message."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the review store cannot be served ({reason}); run `theurian review build`")
        self.reason = reason


class ReviewExportUnwritable(TheurianError):  # noqa: N818 - it names a state of the target, as the message does
    """The export's target could not be written (a full disk, a quota, a read-only file system, a file size limit,
    or a write DuckDB was refused there): the store it was read from is fine, and nothing was published."""


class ReviewStorePathUnsupported(ReviewStoreUnavailable):
    """The store's resolved path holds what DuckDB cannot open a database through: `?` (DuckDB cuts the path there
    to name its write-ahead log), a backslash (read as a separator), or bytes that are not UTF-8 (DuckDB fails with
    an internal `std::bad_cast`). Served as the one constant refusal; `theurian review build` names the cure."""

    def __init__(self) -> None:
        super().__init__("unreadable: DuckDB cannot open a path holding ?, a backslash or bytes not UTF-8")
        self.message = (
            f"the project's path holds `?`, `\\` or bytes that are not UTF-8, {DUCKDB_MISREADS}; move the project "
            "to a folder whose path has none of them, then run `theurian review build`"
        )


class ReviewStoreEscapeError(PathEscapeError):
    """The store file resolves outside `.theurian/state/`: a rebuild cannot clear it, removing it can."""


class FindingsStoreUnavailable(TheurianError):  # noqa: N818 - it names a state, as the refusal does
    """The store cannot be served. `reason` is for logs and tests; a caller is shown one constant message."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the findings store cannot be served ({reason}); run `theurian findings build`")
        self.reason = reason


class ReviewLakeNotAFolder(TheurianError):  # noqa: N818 - it names what the lake is
    """`.theurian/review` exists but is not a folder: building from it would publish an empty store."""


class ReviewStoreIsAFolder(TheurianError):  # noqa: N818 - it names what the store's place holds
    """A folder sits where the store goes: no file can replace it, and removing it is the operator's call."""


class LakeChangedDuringBuildError(TheurianError):
    """A record file an incremental build took over unread changed or vanished before the build read it for the
    concern clustering: the store it would make would not be the lake's, so nothing is published."""

    def __init__(self, record_path: str) -> None:
        super().__init__(
            f"the evidence file .theurian/review/{record_path} changed or vanished while the review store was being "
            "built (an ingest or a scan ran beside the build?), so no store was published and the old one is kept. "
            "Run `theurian review build` again once the ingest is done."
        )


class GitHistoryError(TheurianError):
    """The project's history cannot be read through git."""


# One constant for an unknown key, a key of another kind and (once private ingestion creates the class) a
# withheld record: what separates them is material the caller was not granted.
THREAD_NOT_AVAILABLE_REFUSAL: Final = (
    "THREAD_NOT_AVAILABLE: this installation's review store holds no review thread under that repository and "
    "recordKey. Take both from a review.search record whose kind is review-thread, exactly as it publishes "
    "them. Nothing was drafted."
)
CONCERN_NOT_AVAILABLE_REFUSAL: Final = (
    "CONCERN_NOT_AVAILABLE: this installation's review store holds no concern under that concernId. Take it from "
    "a review.listConcerns row (or a review.findSimilar record's concernId) of the store built now: a rebuild keeps "
    "a concern's id while its earliest member stays in it. Nothing was drafted."
)


class ThreadNotAvailableError(TheurianError):
    """No review thread under that repository and recordKey is stored (or one is withheld): one constant."""

    def __init__(self) -> None:
        super().__init__(THREAD_NOT_AVAILABLE_REFUSAL)


class ConcernNotAvailableError(TheurianError):
    """No concern under that concernId is stored in the store built now: one constant."""

    def __init__(self) -> None:
        super().__init__(CONCERN_NOT_AVAILABLE_REFUSAL)


class SituationWithoutWords(TheurianError):  # noqa: N818 - it names what the situation lacks, as the refusal does
    """A situation holds no content word (`projection.review_similar.content_words`), or none the embedding model has a
    vector for: nothing can be compared, and an empty answer would say that something was."""

    def __init__(self) -> None:
        super().__init__("the situation holds no word to compare by")
