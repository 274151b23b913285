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


# The other places under `.theurian` a person authors (or accepts into): source, so the derived-state cure would
# delete nothing that mends them. Each is named by Theurian's own fixed words, never by what a file named.
_SOURCE_PLACES: Final = {
    ".theurian/migrations": "folder",
    ".theurian/knowledge": "folder",
    ".theurian/proposals": "folder",
    ".theurian/config.toml": "file",
}
# A path Theurian knows no fixed place for (one relative to a folder other than the project's root).
UNPLACED_ESCAPE_CURE: Final = (
    "Cure: replace the symbolic link on that path with the file or folder it stands for, inside the project, then "
    "run the command again."
)


def source_escape_cure(place: str) -> str:
    """The cure for one of `_SOURCE_PLACES` linked out of the project."""
    return (
        f"Cure: {place} is source, not derived; replace the link with the {_SOURCE_PLACES[place]} itself (move what "
        "it points at into the project), then run the command again."
    )


def linked_inside_source_cure(place: str) -> str:
    """The cure for a link inside one of `_SOURCE_PLACES` (the place itself a real folder) that points out."""
    return (
        f"Cure: {place} is source, not derived, and a symbolic link inside it points out of the project; replace "
        f"that link with the file or folder it stands for (moved into {place}), then run the command again."
    )


def escape_cure(relative: str) -> str:
    """The cure for a path that escapes, chosen by the project-relative place it names (the shortest escaping part
    of it, `theurian.containment.first_failing_part`)."""
    if relative == ".theurian":
        return THEURIAN_DIR_ESCAPE_CURE
    if _under(relative, ".theurian/review"):
        return REVIEW_SOURCE_ESCAPE_CURE
    if _under(relative, ".theurian/state"):
        return STATE_ESCAPE_CURE
    for place in _SOURCE_PLACES:
        if relative == place:
            return source_escape_cure(place)
        if _under(relative, place):  # `relative` is the shortest part that escapes: the place itself does not
            return linked_inside_source_cure(place)
    return UNPLACED_ESCAPE_CURE


def _under(relative: str, place: str) -> bool:
    return relative == place or relative.startswith(f"{place}/")


def path_escape_refusal(relative: str) -> str:
    """PATH_ESCAPE_REFUSAL with the cure for what escaped, chosen from the escaping path's project-relative place.

    Only Theurian's own fixed words are shown: never `relative` itself, which may hold a record path a file named.
    """
    return f"{PATH_ESCAPE_REFUSAL} {escape_cure(relative)}"


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


def escape_unprintable(text: str) -> str:
    """`text` with each character `str.isprintable` refuses written as its escape (`\\n`, `\\x00`, `\\u202e`), and each
    backslash as `\\\\`."""
    if text.isprintable() and "\\" not in text:
        return text
    # A backslash is escaped too, so a key holding a literal `\\n` reads apart from a newline.
    return "".join(char if char.isprintable() and char != "\\" else repr(char)[1:-1] for char in text)

