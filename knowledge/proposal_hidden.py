"""Characters a reviewer of rendered text never sees, found in the files a draft writes: named where the reviewer
reads (`hiddenCharacters` in evidence.json) and in the answer's nextSteps, never removed and never refused.

A bidirectional control (U+202E and its kin) can make a body display in another order than it is stored, and a
human reading the proposal is the approval. The classes are `theurian.hidden_characters`' — the words every served
row's `hiddenCharacters` uses — so the label a reviewer reads here is the one an agent reads once the item is served.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from theurian.hidden_characters import CLASSES, FIELD, classes_in

HIDDEN_FIELD: Final = FIELD


def hidden_in(files: Mapping[str, str]) -> dict[str, list[str]]:
    """The classes of hidden characters each file's text holds, for the files that hold any, by file name."""
    return {name: classes for name, text in files.items() if (classes := classes_in((text,)))}


def hidden_step(hidden: Mapping[str, list[str]]) -> str | None:
    """The nextSteps line for a draft whose files hold hidden characters; None when none does."""
    if not hidden:
        return None
    found = [name for name in CLASSES if any(name in classes for classes in hidden.values())]
    return (f"Read it with invisible characters shown before accepting: {', '.join(sorted(hidden))} "
            f"hold{'s' if len(hidden) == 1 else ''} {', '.join(found)} characters, which a reader of rendered text "
            f"never sees and which can hide or reorder what the text says ({HIDDEN_FIELD} in the draft's "
            "evidence.json names where).")
