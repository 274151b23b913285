"""Fixtures the evidence tests share."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder (a `.theurian/` and nothing in it)."""
    (tmp_path / ".theurian").mkdir()
    return tmp_path
