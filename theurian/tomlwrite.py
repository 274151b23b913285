"""The TOML this program writes, for files people also edit by hand (the registry, the project config).

The standard library reads TOML (`tomllib`) but does not write it. This writer renders any document `tomllib`
can produce, so a rewrite keeps every key and value a person added (comments are the one thing lost); the tests
read every rendering back with `tomllib` and compare.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable, Mapping
from typing import Any

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


def value(item: Any) -> str:
    """Any value `tomllib` can return, as TOML (tables inline)."""
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int):
        return str(item)
    if isinstance(item, float):
        if math.isnan(item):
            return "nan"
        if math.isinf(item):
            return "inf" if item > 0 else "-inf"
        return repr(item)
    if isinstance(item, str):
        return string(item)
    if isinstance(item, datetime.datetime | datetime.date | datetime.time):
        return item.isoformat()
    if isinstance(item, Mapping):
        return "{" + ", ".join(f"{string(k)} = {value(v)}" for k, v in item.items()) + "}"
    if isinstance(item, list):
        return "[" + ", ".join(value(v) for v in item) + "]"
    raise TypeError(f"TOML cannot hold a {type(item).__name__}")


def document(doc: Mapping[str, Any], *, prefix: tuple[str, ...] = ()) -> str:
    """A whole document: plain keys first, then each table under its own `[header]`."""
    lines = [f"{string(k)} = {value(v)}\n" for k, v in doc.items() if not isinstance(v, Mapping)]
    for key, table in doc.items():
        if isinstance(table, Mapping):
            path = (*prefix, key)
            body = document(table, prefix=path)
            lines.append(f"\n[{'.'.join(string(part) for part in path)}]\n{body}")
    return "".join(lines)
