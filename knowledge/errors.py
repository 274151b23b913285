"""The knowledge store's exception tree. Each error a caller can act on carries a contract code and details.

    TheurianError (theurian.errors)
    └── KnowledgeError                    code, details
        ├── MigrationInvalidError         a migration file fails its schema or an operation cannot apply
        ├── MigrationChecksumMismatchError an applied migration was edited (MIGRATION_CHECKSUM_MISMATCH)
        ├── RevisionConflictError         expectedRevision did not match (REVISION_CONFLICT)
        ├── StateMissingError             no canonical state has been built for the project yet
        └── StateUnreadableError          the state database (or its pointer) cannot be read as this build's
            ├── StateBusyError            another process holds a lock on it: a retry mends it, a rebuild must not
            └── StateNotAsBuiltError      its build stamp is not this installation's, or its rows are not the
                                          rows its build stamped (`knowledge.state_stamp`): `migrate apply` cures

The CLI prints `message` and exits 1; the daemon turns each into a refusal with the same text.
"""

from __future__ import annotations

from typing import Any

from theurian.errors import TheurianError

STATE_REBUILD_CURE = (
    "delete .theurian/state/ and run `theurian migrate apply` (then `theurian index build`); "
    "the state is derived, so nothing authored is lost"
)


class KnowledgeError(TheurianError):
    """Base of the knowledge store's errors; `code` is the contract's error code, or None."""

    code: str | None = None

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}

    def as_document(self) -> dict[str, Any]:
        """The contract's error envelope: {"error": {code, message, details}}."""
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class MigrationInvalidError(KnowledgeError):
    """A migration names a file, an operation index (or None for the document itself) and a problem."""

    code = "INVALID_INPUT"

    def __init__(self, file_name: str, operation_index: int | None, problem: str) -> None:
        where = f"operation {operation_index}" if operation_index is not None else "the document"
        super().__init__(
            f"migration {file_name} is invalid at {where}: {problem}; nothing was changed",
            details={"file": file_name, "operationIndex": operation_index, "problem": problem},
        )
        self.file_name = file_name
        self.operation_index = operation_index
        self.problem = problem


class MigrationChecksumMismatchError(KnowledgeError):
    code = "MIGRATION_CHECKSUM_MISMATCH"

    def __init__(self, file_name: str, *, recorded: str, actual: str | None) -> None:
        what = "was edited after it was applied" if actual is not None else "was removed after it was applied"
        super().__init__(
            f"MIGRATION_CHECKSUM_MISMATCH: {file_name} {what}; restore it (an applied migration is never "
            "edited: write a new migration instead); nothing was changed",
            details={"file": file_name, "recorded": recorded, "actual": actual},
        )


class RevisionConflictError(KnowledgeError):
    code = "REVISION_CONFLICT"

    def __init__(
        self, file_name: str, operation_index: int, *, item_id: str, expected: str, actual: str | None
    ) -> None:
        super().__init__(
            f"REVISION_CONFLICT: revision conflict on {item_id} in {file_name} operation {operation_index}: "
            f"expectedRevision is {expected} but the current revision is {actual or 'none'}; "
            "nothing was changed",
            details={
                "itemId": item_id,
                "expected": expected,
                "actual": actual,
                "file": file_name,
                "operationIndex": operation_index,
            },
        )


class StateMissingError(KnowledgeError):
    """No active pointer: the project's migrations have never been applied here."""


class StateUnreadableError(KnowledgeError):
    """The pointer or the database it names cannot be read as a state this build wrote."""


class StateBusyError(StateUnreadableError):
    """Another process holds a lock on the state database for longer than a reader waits. Nothing is wrong with
    it: `migrate apply` must stop rather than rebuild over it as if it were damaged."""


class IndexDamagedError(KnowledgeError):
    """A published index whose stored postings no longer match the digest its pointer recorded: the search falls
    back to the substring path (`index-unreadable`), exactly as for an index SQLite cannot read."""


class StateNotAsBuiltError(StateUnreadableError):
    """The state is not the one `migrate apply` built here: no stamp, another installation's or another kind's
    stamp, a superseded one, or rows that are not the rows stamped. `reason` says which, for logs and tests; a tool
    answers every reason with one constant refusal (`knowledge.reading.StateDamagedError`)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
