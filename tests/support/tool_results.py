"""Reading one in-process tool call's wire result: a refusal's one text, or a served answer's structured content."""

from __future__ import annotations

from typing import Any


def refusal_text(result: dict[str, Any]) -> str:
    """The text of a refusal, after checking it has a refusal's exact shape (one text block, no structured part)."""
    assert result["isError"] is True, result
    assert set(result) == {"content", "isError"}
    [block] = result["content"]
    return str(block["text"])


def served(result: dict[str, Any]) -> dict[str, Any]:
    """The structured content of an answer that did not refuse."""
    assert result["isError"] is False, result
    return dict(result["structuredContent"])
