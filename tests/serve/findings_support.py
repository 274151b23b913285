"""In-process review.findings: the real tool behind the real dispatcher, inputs checked against the published
input schema first (as the input tier does, its admitted arguments dispatched) and every served answer checked
against the response schema."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsonschema

import schemas
from projection.findings_build import build_findings_store
from serve.dispatch import Dispatcher
from serve.tooling import ServeSettings
from serve.tools.findings import TOOL_NAME, findings_tools
from serve.validation import Admitted, InputValidator
from tests.projection.git_fixture import Planned, write_history
from tests.support.tool_results import refusal_text, served
from theurian import registry
from theurian.project import init_project

SETTINGS = ServeSettings("internal")
RESPONSE_SCHEMA = schemas.load("mcp", "review-findings-response.schema.json")
RESPONSE_VALIDATOR = jsonschema.Draft202012Validator(RESPONSE_SCHEMA)
_INPUT = InputValidator()


def check_response(structured: Any) -> dict[str, Any]:
    RESPONSE_VALIDATOR.validate(structured)
    assert isinstance(structured, dict)
    return structured


def git_project(folder: Path, planned: Sequence[Planned]) -> tuple[Path, list[str]]:
    """A project at `folder/repo` whose git history is `planned`; its commit shas in order."""
    root = folder / "repo"
    shas = write_history(root, planned)
    init_project(root)
    return root, shas


def registered_and_built(history: tuple[Path, list[str]], project_id: str) -> tuple[Path, list[str]]:
    """`history`'s project registered as `project_id` under the running test's installation, its store built."""
    registry.register(history[0], project_id)
    build_findings_store(history[0])
    return history


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


__all__ = ["check_response", "dispatch", "git_project", "refusal_text", "registered_and_built", "served"]
