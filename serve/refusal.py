"""Refusals: the one shape every tier answers a call it will not serve with (`content` + `isError: true`).

The validation middleware, the dispatcher and the tools all produce exactly this, so a caller cannot tell from
the shape which tier answered, only from what it says.
"""

from __future__ import annotations

import json
from typing import Any, Final

INTERNAL_FAULT_REFUSAL: Final = (
    "The daemon failed while answering this call; nothing was changed. The daemon's log has the details."
)


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

