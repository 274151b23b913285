"""The hand-written sample lake under fixtures/evidence/, as the evidence tests read it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

FIXTURE_LAKE = Path(__file__).resolve().parents[2] / "fixtures" / "evidence"


def fixture_records() -> list[dict[str, Any]]:
    return [orjson.loads(p.read_bytes()) for p in sorted(FIXTURE_LAKE.glob("sha256-*/*/*.json"))]
