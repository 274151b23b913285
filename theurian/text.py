"""Telling text from what only looks like it once Python has decoded it, and the one ASCII case fold."""

from __future__ import annotations

import string
import unicodedata
from typing import Final

from theurian.hidden_characters import BIDI_CONTROLS

# The 26 ASCII letters and nothing else: GitHub's case-insensitive matching of names, and the contract's `q`
# folding. SQL that folds the same way spells its `translate(...)` from these two (a test pins each to
# `ascii_fold`).
ASCII_UPPER: Final = string.ascii_uppercase
ASCII_LOWER: Final = string.ascii_lowercase
_ASCII_FOLD: Final = bytes.maketrans(ASCII_UPPER.encode("ascii"), ASCII_LOWER.encode("ascii"))


def ascii_fold(text: str) -> str:
    """`text` with A-Z folded to a-z and nothing else, so folding never changes its length or any non-ASCII
    character. Never `str.casefold()`/`str.lower()` on non-ASCII text: they fold U+212A KELVIN SIGN to 'k' and
    U+0130 to two characters. (`str.lower` is exactly this on ASCII text, and much faster, so it is used there.)"""
    if text.isascii():
        return text.lower()
    # On the UTF-8 bytes: every byte of a character past ASCII is 0x80 or above, so the byte table changes the 26
    # letters and nothing else. `surrogatepass` carries a lone surrogate through both ways (three bytes, each
    # 0x80 or above too). `str.translate` looks every character up in a dict: 40 times slower on a 4 KB comment.
    return text.encode("utf-8", "surrogatepass").translate(_ASCII_FOLD).decode("utf-8", "surrogatepass")


def is_utf8(text: str) -> bool:
    """Whether `text` can be written as UTF-8: False when it holds a lone surrogate (U+D800-U+DFFF), as a string
    decoded with `surrogateescape` (a file system name, a command-line argument, a git message line) does for each
    byte that was not UTF-8, and as JSON's `\\ud800` escape does. The one surrogate check: a lone surrogate is the
    only thing in a `str` that UTF-8 cannot encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def one_line(message: str) -> str:
    """A message as the one line it is meant to be (a CLI error, a log line, a table cell): a line break of any kind,
    a control character (a terminal escape) or a bidirectional control (which reorders what the terminal shows)
    that a path or any value carried is shown escaped, as Python would write it. Everything else stays as typed,
    so a path with an ideographic space or a joiner can still be copied from it."""
    return "".join(c.encode("unicode_escape").decode("ascii") if _breaks_the_line(c) else c for c in message)


def _breaks_the_line(character: str) -> bool:
    return character != "\t" and (unicodedata.category(character) == "Cc" or character in "\u2028\u2029"
                                   or character in BIDI_CONTROLS)
