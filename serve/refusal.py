"""Refusals: the one shape every tier answers a call it will not serve with (`content` + `isError: true`).

The validation middleware, the dispatcher and the tools all produce exactly this, so a caller cannot tell from
the shape which tier answered, only from what it says.
"""

from __future__ import annotations

import json
from typing import Any, Final

from theurian.text import quoted

# The serve tier's name for quoting a caller's string (`theurian.text.quoted` owns the rule and the wording).
describe_value: Final = quoted

# Why a search refuses a NUL in the text it searches for (review.search's filters, knowledge.search's `query`):
# SQLite's matching stops at one, so "log\0zzz" would be answered as a search for "log" and "\0" as one for anything.
SEARCHED_NUL_REASON: Final = ("; it is refused rather than repaired, because a search for a value the caller did "
                              "not send would answer about it. Remove it.")

INTERNAL_FAULT_REFUSAL: Final = (
    "The daemon failed while answering this call; nothing was changed. The daemon's log has the details."
)


def nul_refusal(tool: str, key: str, reason: str) -> str:
    """The refusal of a string argument holding a NUL (U+0000): the one wording every tool gives it, `reason` (what
    follows the parenthesis, its separator included) saying why that tool does not repair it. The value is never
    shown: what follows the NUL is exactly what the refusal exists to keep from being misread."""
    return f"{tool}: `{key}` contains a NUL (U+0000){reason}"


def unwritable_refusal(fault: str) -> str:
    """A write-intent tool's refusal when the file system refused its write: `fault` is
    `theurian.disk_faults.project_write_text`'s place, condition and cure (paths project-relative). Nothing is
    left behind (a half-written proposal is removed), and only the operator can cure the folder."""
    return (f"Nothing was written: {fault}. The operator must cure this folder (the commands run in the project's "
            "root folder); then make the call again.")


def coded_refusal_text(code: str, message: str, details: dict[str, Any]) -> str:
    """A refusal carrying a code from the contract's Errors table: the contract's error envelope as the text, so
    an agent can read the code and the details without parsing prose."""
    return json.dumps({"error": {"code": code, "message": message, "details": details}}, ensure_ascii=False)


def refusal_result(message: str) -> dict[str, Any]:
    """The wire result of a refusal: one text block and `isError: true`, nothing else."""
    return {"content": [{"type": "text", "text": message}], "isError": True}
