"""Telling text from what only looks like it once Python has decoded it."""

from __future__ import annotations

import unicodedata


def is_utf8(text: str) -> bool:
    """Whether `text` can be written as UTF-8: False when it holds a lone surrogate, as a string decoded with
    `surrogateescape` (a file system name, a command-line argument, a git message line) does for each byte that was
    not UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def one_line(message: str) -> str:
    """A message as the one line it is meant to be (a CLI error, a log line): a line break of any kind, or a control
    character (a terminal escape), that a path or any value carried is shown escaped, as Python would write it.
    Everything else stays as typed, so a path with an ideographic space or a joiner can still be copied from it."""
    return "".join(c.encode("unicode_escape").decode("ascii") if _breaks_the_line(c) else c for c in message)


def _breaks_the_line(character: str) -> bool:
    return character != "\t" and (unicodedata.category(character) == "Cc" or character in "\u2028\u2029")
