"""How the read commands print a tool's answer: a table (on a terminal, cut to its width) or `--csv` (every field
of every row); `--json` is `theurian.cli.json_summary`'s document, the structured result exactly as an MCP client
receives it in its `summary`.

Every cell of the table is somebody else's text as often as not (a review comment, a finding, a knowledge body), so
each is shown as one line with control characters escaped (`theurian.text.one_line`): a terminal escape sequence
in a stored comment is printed, never obeyed. A table cell also shows every character of the hidden classes an
agent's row is labelled with (`theurian.hidden_characters`: zero-width, tag and other format characters, besides
the bidirectional controls `one_line` already escapes) as its escape, so an operator sees what a reader of
rendered text would not; `--csv` and `--json` keep every value exactly as stored, as the tools serve it
(docs/decisions.md, "Hidden characters in CLI tables"), except that `--csv` prefixes `'` to a text cell a
spreadsheet would read as a formula (`csv_cell`).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final

from theurian.hidden_characters import classes_in
from theurian.text import one_line

# A spreadsheet opening the file reads a cell starting with one of these as a formula (OWASP, "CSV Injection"), and
# review text from anyone on a public pull request would run there (a link that sends a cell away, a DDE command).
# A leading ' makes the cell text; the spreadsheet shows it without the quote.
FORMULA_TRIGGERS: Final = ("=", "+", "-", "@", "\t", "\r")
MIN_LAST_COLUMN: Final = 20  # the widest column (the text) keeps at least this much on a narrow terminal
_GAP: Final = "  "


def cell(value: Any) -> str:
    """A value as one table cell (and, through `csv_cell`, a CSV one): text as itself, null as empty, a list or
    object as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def visible(text: str) -> str:
    """`text` as one table line (`one_line`), each hidden character (any class `classes_in` names) shown as its
    backslash escape (`\\u200b`, `\\U000e0041`), as `one_line` shows a control."""
    line = one_line(text)
    if not classes_in((line,)):
        return line
    return "".join(_escaped(c) if classes_in((c,)) else c for c in line)


def _escaped(character: str) -> str:
    return character.encode("unicode_escape").decode("ascii")


def csv_cell(value: Any) -> str:
    """A value as one CSV cell: `cell`, with `'` before text starting with a FORMULA_TRIGGERS character. A number
    or a nested value (JSON, starting `[` or `{`) is ours to write and never a formula, so it is left as it is."""
    text = cell(value)
    return "'" + text if isinstance(value, str) and text.startswith(FORMULA_TRIGGERS) else text


def as_csv(rows: Sequence[Mapping[str, Any]], fields: Sequence[str]) -> str:
    """A header of `fields` (the row schema's properties, so it is there with no row too), then one line per row,
    a field a row leaves out empty. Text is kept whole (a line break inside a quoted cell is CSV's own), never
    escaped or cut; only a cell a spreadsheet would run as a formula gains a leading `'` (`csv_cell`)."""
    keys = list(fields)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    # Python's csv quotes a cell for the line terminator's characters only, so a lone CR in stored text went out
    # unquoted, and a spreadsheet started a new row there: "ok\r=HYPERLINK(…)" became a cell of its own, a live
    # formula. A row holding a CR is written with every cell quoted, the CR kept inside its cell.
    quoting = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(keys)
    for row in rows:
        cells = [csv_cell(row.get(key)) for key in keys]
        (quoting if any("\r" in text for text in cells) else writer).writerow(cells)
    return out.getvalue()


def shortened(text: str, width: int) -> str:
    """`text` whole when it fits `width` characters, else its first `width` and `...`."""
    return text if len(text) <= width else text[:width] + "..."


def as_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[tuple[str, str]], *,
             width: int | None = None) -> str:
    """`columns` is (heading, key) pairs; the last is the text column, cut (with `...`) so every line fits `width`
    when one is given (a terminal's), whole otherwise."""
    header = [heading for heading, _ in columns]
    body = [[visible(cell(row.get(key))) for _, key in columns] for row in rows]
    widths = [max([len(header[i]), *(len(line[i]) for line in body)]) for i in range(len(columns) - 1)]
    if width is not None:
        room = max(MIN_LAST_COLUMN, width - sum(widths) - len(_GAP) * len(widths))
        body = [[*line[:-1], line[-1] if len(line[-1]) <= room else line[-1][: room - 3] + "..."] for line in body]
    lines = []
    for line in [header, *body]:
        lines.append(_GAP.join([*(text.ljust(w) for text, w in zip(line[:-1], widths, strict=True)),
                                line[-1]]).rstrip())
    return "\n".join(lines)


def terminal_width() -> int | None:
    """The terminal's width when stdout is one; None when it is a pipe or a file (cells are then kept whole)."""
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns
