"""The little TOML this program writes: tables of string and string-list values, hand-editable afterwards.

The standard library reads TOML (`tomllib`) but does not write it; our files are simple enough that a writer of
basic strings is all we need, and every file it writes is read back with `tomllib` in the tests.
"""

from __future__ import annotations

from collections.abc import Iterable

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def string(value: str) -> str:
    """A TOML basic string holding exactly `value`."""
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def string_list(values: Iterable[str]) -> str:
    items = [string(v) for v in values]
    if not items:
        return "[]"
    return "[\n" + "".join(f"    {item},\n" for item in items) + "]"
