"""Telling text from what only looks like it once Python has decoded it."""

from __future__ import annotations


def is_utf8(text: str) -> bool:
    """Whether `text` can be written as UTF-8: False when it holds a lone surrogate, as a string decoded with
    `surrogateescape` (a file system name, a command-line argument, a git message line) does for each byte that was
    not UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
