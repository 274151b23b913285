"""review.findings' own admission gate under real concurrency: four calls hold permits, a fifth is refused."""

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from serve.gate import MAX_CONCURRENT_SEARCHES
from serve.tooling import Call
from serve.tools.findings import FINDINGS_CAPACITY_REFUSAL, findings_tools
from tests.serve.findings_support import SETTINGS
from tests.support.admission import five_at_once
from tests.support.sample_project import registered_empty_project


def test_a_fifth_concurrent_call_is_refused_with_the_capacity_constant_and_served_once_permits_free(
    tmp_path: Path,
) -> None:
    registered_empty_project(tmp_path / "p", "p")
    [tool] = findings_tools()

    def empty(call: Call, **arguments: Any) -> Mapping[str, Any]:  # the project has no findings store to read
        return {"count": 0, "truncated": False, "findings": []}

    run = five_at_once(dataclasses.replace(tool, handler=empty), {"projectId": "p"}, SETTINGS)
    assert run.refused == {"content": [{"type": "text", "text": FINDINGS_CAPACITY_REFUSAL}], "isError": True}
    assert [h["isError"] for h in run.held] == [False] * MAX_CONCURRENT_SEARCHES
    assert run.after["isError"] is False
