"""Characters a reader of rendered text never sees, named by class for every served row (never removed).

A review comment can carry text built to steer an agent that a human reviewer cannot see: bidirectional
controls that reorder what is displayed, zero-width characters, Unicode tag characters (an invisible copy of
ASCII), and other format characters. Served values stay byte for byte what was stored (the contract's rule);
each row instead names the classes it holds in `hiddenCharacters`, so a client can refuse or escape it.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any, Final

from theurian.hidden_ranges import HIDDEN_RANGES

FIELD: Final = "hiddenCharacters"
BIDI_CONTROL: Final = "bidi-control"
ZERO_WIDTH: Final = "zero-width"
TAG_CHARACTER: Final = "tag-character"
OTHER_FORMAT: Final = "other-format"
# The order a row lists its classes in.
CLASSES: Final = (BIDI_CONTROL, ZERO_WIDTH, TAG_CHARACTER, OTHER_FORMAT)

# The controls that reorder what is displayed (Trojan Source): theurian.text.one_line escapes them on a terminal line.
BIDI_CONTROLS: Final = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_ZERO_WIDTH: Final = frozenset("\u180e\u200b\u200c\u200d\u2060\ufeff")


def hidden_points() -> frozenset[str]:
    """Every code point any of the four classes holds: every format character (Cf) in this Python's Unicode
    database, plus U+180E, which Unicode moved out of Cf. The definition itself; it walks every code point
    (0.13–0.2 s of CPU), so `_any_hidden` reads its ranges from `HIDDEN_RANGES` where that holds this Python's
    Unicode version (`scripts/hidden_ranges.py` writes them from here)."""
    points = {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"}
    return frozenset(points | BIDI_CONTROLS | _ZERO_WIDTH | {chr(c) for c in range(0xE0000, 0xE0080)})


def ranges_of(points: Iterable[str]) -> tuple[tuple[int, int], ...]:
    """The code points as runs of consecutive ones, each (first, last), in order."""
    runs: list[tuple[int, int]] = []
    for code in sorted(ord(p) for p in points):
        if runs and runs[-1][1] == code - 1:
            runs[-1] = (runs[-1][0], code)
        else:
            runs.append((code, code))
    return tuple(runs)


def pattern_for(unidata_version: str) -> re.Pattern[str]:
    """One character class of every hidden code point under that Unicode version: from `HIDDEN_RANGES` when it
    holds the version, else from the definition (which only knows this Python's version)."""
    ranges = HIDDEN_RANGES.get(unidata_version) or ranges_of(hidden_points())
    return re.compile("[" + "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "")
                                    for a, b in ranges) + "]")


@cache
def _any_hidden() -> re.Pattern[str]:
    """`pattern_for` this Python's Unicode version, made on first use (a command that serves no row never
    compiles it)."""
    return pattern_for(unicodedata.unidata_version)


def class_of(char: str) -> str:
    """The class of one hidden character (one `_any_hidden()` matches)."""
    if char in BIDI_CONTROLS:
        return BIDI_CONTROL
    if char in _ZERO_WIDTH:
        return ZERO_WIDTH
    if 0xE0000 <= ord(char) <= 0xE007F:
        return TAG_CHARACTER
    return OTHER_FORMAT


def classes_in(texts: Iterable[str]) -> list[str]:
    """The classes of hidden characters the texts hold, in CLASSES order; empty when none."""
    found: set[str] = set()
    for text in texts:
        for match in _any_hidden().finditer(text):
            found.add(class_of(match.group()))
            if len(found) == len(CLASSES):
                break
    return [name for name in CLASSES if name in found]


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def labelled(row: dict[str, Any]) -> dict[str, Any]:
    """`row` with `hiddenCharacters` set from every text value it holds, nested ones included (the field itself
    is recomputed, never read); the row is changed in place and returned."""
    row.pop(FIELD, None)
    row[FIELD] = classes_in(_strings(row))
    return row
