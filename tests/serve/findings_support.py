"""In-process review.findings: the real tool behind the real dispatcher, inputs checked against the published
input schema first (as the input tier does, its admitted arguments dispatched) and every served answer checked
against the response schema."""

from __future__ import annotations

import asyncio
from typing import Any

import jsonschema

import schemas
from serve.dispatch import Dispatcher
from serve.tooling import ServeSettings
from serve.tools.findings import TOOL_NAME, findings_tools
from serve.validation import Admitted, InputValidator

SETTINGS = ServeSettings("internal")
RESPONSE_SCHEMA = schemas.load("mcp", "review-findings-response.schema.json")
RESPONSE_VALIDATOR = jsonschema.Draft202012Validator(RESPONSE_SCHEMA)
_INPUT = InputValidator()


def check_response(structured: Any) -> dict[str, Any]:
    RESPONSE_VALIDATOR.validate(structured)
    assert isinstance(structured, dict)
    return structured


def dispatch(project_id: str, **arguments: Any) -> dict[str, Any]:
    """The wire result of one call; a served answer is validated against the response schema."""
    arguments = {"projectId": project_id, **arguments}
    verdict = _INPUT.admit(TOOL_NAME, "review-findings-input.schema.json", arguments)
    # The schema admits it: whatever happens next is the tool's own answer.
    assert isinstance(verdict, Admitted), verdict
    result = asyncio.run(Dispatcher(findings_tools(), SETTINGS).call(TOOL_NAME, verdict.arguments))
    if not result["isError"]:
        check_response(result["structuredContent"])
    return result


def refusal_text(result: dict[str, Any]) -> str:
    assert result["isError"] is True, result
    assert set(result) == {"content", "isError"}
    [block] = result["content"]
    return str(block["text"])


def served(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is False, result
    return dict(result["structuredContent"])


__all__ = ["check_response", "dispatch", "refusal_text", "served"]
