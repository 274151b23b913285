"""Telling text from what only looks like it once Python has decoded it, the one ASCII case fold, and the one way
a caller's text is shown back: `quoted` (inside a bound, else by its length), `escaped`, and `one_line`; and
`shell_word`, a value written so a shell reads it back byte for byte."""

from __future__ import annotations

import shlex
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
# How much of a caller's text (a kind, a key, a file name) a refusal quotes back: enough for any name a person types,
# short enough that a refusal stays one readable line. A bound of its own (a filter's 200, an item id's 200) is
# passed to `quoted` where the contract or a schema sets one.
MAX_SHOWN_CHARS: Final = 80


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


def escaped(text: str) -> str:
    """`text` as a refusal shows a caller's text: each character a reader would not see as written (a control, a
    line or paragraph separator, a space other than U+0020, a bidirectional or other format character such as
    U+202E or U+200B, anything unassigned) written as its Python escape, and each backslash doubled, so a literal
    `\\n` reads apart from a newline. Everything printable (`café`, `東京`) stays as typed."""
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(c if c.isprintable() and c not in BIDI_CONTROLS and c != "\\" else _escape(c) for c in text)


def quoted(value: str, bound: int = MAX_SHOWN_CHARS, *, described_as: str = "a value") -> str:
    """A caller's string as a refusal quotes it: in quotes and `escaped` (as Python's `repr` writes it) when it is at
    most `bound` characters; past the bound only its length ("a value of 120 characters"), never a part of it: a
    cut value reads as the whole one."""
    if len(value) <= bound:
        return repr(value)
    return f"{described_as} of {len(value)} characters"


def one_line(message: str) -> str:
    """A message as the one line it is meant to be (a CLI error, a log line, a table cell): a line break of any kind,
    a control character (a terminal escape) or a bidirectional control (which reorders what the terminal shows)
    that a path or any value carried is shown escaped, as Python would write it. Everything else stays as typed,
    so a path with an ideographic space or a joiner can still be copied from it."""
    return "".join(_escape(c) if _breaks_the_line(c) else c for c in message)


def _escape(character: str) -> str:
    return character.encode("unicode_escape").decode("ascii")


def _breaks_the_line(character: str) -> bool:
    return character != "\t" and (unicodedata.category(character) == "Cc" or character in "\u2028\u2029"
                                   or character in BIDI_CONTROLS)


def shell_word(text: str) -> str:
    """`text` as one word a shell reads back as exactly its bytes, for a command line an operator pastes (`next:
    theurian project register PATH`): as typed when no character in it is special to a shell, in single quotes
    when it is printable text (`shlex.quote`), else in ANSI-C quotes, `$'…'` (bash, zsh, ksh and POSIX.1-2024;
    not dash before 0.5.13), with each byte of a character a terminal would not show as written (a byte that is not
    UTF-8, which `surrogateescape` kept as a lone surrogate; a control; a format or bidirectional character) as
    `\\xHH`, and `\\` and `'` escaped."""
    if all(_shown_as_written(c) for c in text):
        return shlex.quote(text)
    word = "".join(("\\" + c if c in "\\'" else c) if _shown_as_written(c)
                   else "".join(f"\\x{byte:02x}" for byte in _bytes_of(c)) for c in text)
    return f"$'{word}'"


def _shown_as_written(character: str) -> bool:
    return character.isprintable() and character not in BIDI_CONTROLS  # a lone surrogate is not printable


def _bytes_of(character: str) -> bytes:
    try:  # the byte a file system name or an argument held, where it was not UTF-8
        return character.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte decodes to (JSON's `\\ud800`): its three bytes as Python has them
        return character.encode("utf-8", "surrogatepass")
