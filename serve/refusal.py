"""Refusals: the one shape every tier answers a call it will not serve with (`content` + `isError: true`).

The validation middleware, the dispatcher and the tools all produce exactly this, so a caller cannot tell from
the shape which tier answered, only from what it says.
"""

from __future__ import annotations

import json
from typing import Any, Final

# Interpolates nothing: it must not say which path escaped (the cure, beside it, names the derived folder).
PATH_ESCAPE_REFUSAL: Final = (
    "PATH_ESCAPE_REFUSAL: a path Theurian derives for this project resolves outside the project root, "
    "so nothing was read through it."
)
STATE_ESCAPE_CURE: Final = (
    "Cure: remove .theurian/state (it is derived, so nothing authored is lost), run `theurian migrate apply`, "
    "and rebuild the derived artifacts."
)
# `.theurian/review` is source: removing derived state cannot mend a lake that escapes, and it must never be
# deleted as if it were derived.
REVIEW_SOURCE_ESCAPE_CURE: Final = (
    "Cure: .theurian/review is source; replace the link with the evidence folder itself (or remove it and ingest "
    "again), then run `theurian review build`."
)
# `.theurian` itself linked out of the project: everything under it escapes, and neither cure above mends the link.
THEURIAN_DIR_ESCAPE_CURE: Final = (
    "Cure: .theurian itself is a link out of the project; replace the link with a real .theurian folder (move what "
    "it points at into the project), then run the command again."
)
INTERNAL_FAULT_REFUSAL: Final = (
    "The daemon failed while answering this call; nothing was changed. The daemon's log has the details."
)


def path_escape_refusal(relative: str) -> str:
    """PATH_ESCAPE_REFUSAL with the cure for what escaped, chosen from the escaping path's project-relative place.

    Only Theurian's own fixed words are shown: never `relative` itself, which may hold a record path a file named.
    """
    if relative == ".theurian":
        cure = THEURIAN_DIR_ESCAPE_CURE
    elif relative == ".theurian/review" or relative.startswith(".theurian/review/"):
        cure = REVIEW_SOURCE_ESCAPE_CURE
    else:
        cure = STATE_ESCAPE_CURE
    return f"{PATH_ESCAPE_REFUSAL} {cure}"


class ToolRefusal(Exception):
    """Raised inside a tool to refuse the call with `message` (shown to the caller as is)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def coded_refusal_text(code: str, message: str, details: dict[str, Any]) -> str:
    """A refusal carrying a code from the contract's Errors table: the contract's error envelope as the text, so
    an agent can read the code and the details without parsing prose."""
    return json.dumps({"error": {"code": code, "message": message, "details": details}}, ensure_ascii=False)


def refusal_result(message: str) -> dict[str, Any]:
    """The wire result of a refusal: one text block and `isError: true`, nothing else."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def describe_value(value: str, bound: int) -> str:
    """Quote a caller's string inside `bound` characters; past it, give only its length (never echo it)."""
    if len(value) <= bound:
        return repr(value)
    return f"a value of {len(value)} characters"
