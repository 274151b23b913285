"""The knowledge store's exception tree. Each error a caller can act on carries a contract code and details.

    TheurianError (theurian.errors)
    └── KnowledgeError                        code, details
        ├── MigrationInvalidError             a migration file fails its schema or an operation cannot apply
        ├── MigrationChecksumMismatchError    an applied migration was edited (MIGRATION_CHECKSUM_MISMATCH)
        ├── RevisionConflictError             expectedRevision did not match (REVISION_CONFLICT)
        ├── StateMissingError                 no canonical state has been built for the project yet
        ├── StateUnreadableError              the state database (or its pointer) cannot be read as this build's
        │   ├── StateBusyError                another process holds a lock on it: a retry mends it, a rebuild not
        │   └── StateNotAsBuiltError          its build stamp is not this installation's, or its rows are not the
        │                                     rows its build stamped (`knowledge.state_stamp`): `migrate apply` cures
        ├── StateDamagedError                 the state disagrees with its own integrity record (INTEGRITY_REMEDY)
        ├── IndexDamagedError                 a published index is not the one this installation built and its
        │                                     pointer names (`knowledge.index_stamp`; the message is the reason)
        ├── ItemNotAvailableError             no such item in the project, or one withheld from this caller
        ├── FolderRedirectedError             a proposal folder is redirected by a symlink (PATH_ESCAPE_REFUSAL)
        ├── NotAFolderError                   something other than a folder sits where proposals are kept
        ├── GitUnavailableError               the project is not in a git repository git can read
        ├── ProposalError                     a proposal cannot be accepted, rejected or read as asked
        ├── DraftRefusedError                 a migration draft cannot be made from these operations
        │   └── DraftKindError                an operation names a kind a draft does not admit
        ├── ProposalRevisionConflictError     a proposal's expectedRevision is not current (REVISION_CONFLICT)
        ├── CandidateRefusedError             a knowledge candidate cannot be generated from this review thread
        └── SecretInTextError                 a text about to become knowledge holds a secret (SECRET_IN_TEXT)

    Exception
    └── SourceUnreadable                      a source file Theurian will not read (`reason`); the migration
                                              reader reports it as MigrationInvalidError

The cures a message names live here beside their errors (`STATE_REBUILD_CURE`, `INTEGRITY_REMEDY`); a stored
thread or concern that is not available is projection's refusal (`projection.errors`), since projection looks it
up. The CLI prints `message` and exits 1; the daemon turns each into a refusal
with the same text.
"""

from __future__ import annotations

from typing import Any, Final

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
        """The contract's error envelope: {"error": {code, message, details}}. The message leaves out the
        `CODE: ` a one-line CLI refusal starts with: the envelope carries the code once, in `code`."""
        message = self.message.removeprefix(f"{self.code}: ") if self.code else self.message
        return {"error": {"code": self.code, "message": message, "details": self.details}}


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
    """A published index that is not the one this installation built and its pointer names: no stamp or another
    installation's, a superseded index schema, rows that are not the rows stamped, or postings that no longer match
    their digest. The message is the reason (`index status` shows it); the search falls back to the substring path
    (`index-unreadable`), exactly as for an index SQLite cannot read."""


class StateNotAsBuiltError(StateUnreadableError):
    """The state is not the one `migrate apply` built here: no stamp, another installation's or another kind's
    stamp, a superseded one, or rows that are not the rows stamped. `reason` says which, for logs and tests; a tool
    answers every reason with one constant refusal (`knowledge.reading.StateDamagedError`)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class FolderRedirectedError(KnowledgeError):
    """A folder Theurian writes proposals (or accepted files) into is redirected by a symlink."""

    code = "PATH_ESCAPE_REFUSAL"

    def __init__(self, relative: str) -> None:
        super().__init__(
            f"PATH_ESCAPE_REFUSAL: {relative} does not resolve to its own place in the project (a symlink redirects "
            f"it), so nothing was read or written through it. Cure: replace {relative} with a plain folder (move "
            "what it should hold into one), then try again.",
            details={"folder": relative},
        )


class NotAFolderError(KnowledgeError):
    """Something other than a folder (a file, a FIFO) sits where Theurian keeps proposals or accepted files."""

    def __init__(self, relative: str) -> None:
        super().__init__(
            f"{relative} is not a folder (something else sits at its name), so nothing was read or written there. "
            f"Cure: move it aside; Theurian creates {relative} as a folder when it first needs it.",
            details={"folder": relative},
        )


class GitUnavailableError(KnowledgeError):
    """The project's folder is not inside a git repository git can read (or git is not installed)."""


class ProposalError(KnowledgeError):
    """A proposal cannot be found, read, accepted or rejected as asked."""


class DraftRefusedError(KnowledgeError):
    """A draft fails the migration validator or names an operation its entry does not admit."""

    code = "INVALID_INPUT"


INTEGRITY_REMEDY: Final = (
    "Run `theurian migrate apply` to rebuild the derived state from the Git-tracked migrations. "
    "If this signal persists, delete `.theurian/state/` and run `theurian migrate apply` again, "
    "then `theurian index build` to restore ranked retrieval; the state is derived, so nothing is lost."
)


class ItemNotAvailableError(KnowledgeError):
    """One message for an absent id and a withheld one: the difference is what the caller was not granted."""

    def __init__(self, project_id: str, shown_id: str) -> None:
        super().__init__(f"No knowledge item {shown_id} is available in project {project_id!r}.")


class StateDamagedError(KnowledgeError):
    def __init__(self, project_id: str) -> None:
        super().__init__(
            f"Project {project_id!r} could not be fully read: its derived state disagrees with its "
            f"own records about what it holds. {INTEGRITY_REMEDY}"
        )


class CandidateRefusedError(KnowledgeError):
    """The candidate was refused; the message is the refusal a caller reads."""


class ProposalRevisionConflictError(KnowledgeError):
    """`expectedRevision` is not the item's current revision (REVISION_CONFLICT); nothing was drafted."""

    code = "REVISION_CONFLICT"

    def __init__(self, item_id: str, *, expected: str | None, actual: str) -> None:
        super().__init__(
            f"REVISION_CONFLICT: revision conflict on {item_id}: expectedRevision is "
            f"{'null' if expected is None else repr(expected)} but the current revision is {actual}; nothing was "
            "drafted. Read the item again (knowledge.get) and draft against its current revision.",
            details={"itemId": item_id, "expected": expected, "actual": actual},
        )


class DraftKindError(DraftRefusedError):
    """An operation names a kind outside the ten a migration draft admits."""


class SourceUnreadable(Exception):  # noqa: N818 - it names what the file is
    """A source file Theurian will not read: `reason` completes "the file is ..."; `too_large` when the only fault
    is its size (a caller may word that with its own bound)."""

    def __init__(self, reason: str, *, too_large: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.too_large = too_large


SECRET_REFUSAL_CODE: Final = "SECRET_IN_TEXT"  # noqa: S105 - a refusal code, not a password


class SecretInTextError(KnowledgeError):
    """A text about to become knowledge holds a secret; `details` names where (file, line, type, fingerprint)."""

    code = SECRET_REFUSAL_CODE
