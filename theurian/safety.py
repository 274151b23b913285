"""The safety triple every row carrying somebody else's text is served under (SEC-15)."""

from __future__ import annotations

from typing import Final

SAFETY_TRIPLE: Final = {
    "contentClassification": "untrusted-knowledge",
    "mayContainInstructions": True,
    "executable": False,
}
