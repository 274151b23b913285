"""The published JSON Schemas (draft 2020-12), shipped inside the wheel and loaded from the installed package."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def load(family: str, name: str) -> dict[str, Any]:
    """Load `schemas/<family>/<name>` from the installed package (cached; treat the result as read-only)."""
    text = resources.files(__name__).joinpath(family, name).read_text(encoding="utf-8")
    document: dict[str, Any] = json.loads(text)
    return document


def names(family: str) -> list[str]:
    """Every schema file name in a family, sorted."""
    folder = resources.files(__name__).joinpath(family)
    return sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".schema.json"))
