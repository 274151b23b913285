"""Write theurian/hidden_ranges.py: this Python's entry computed from `theurian.hidden_characters.hidden_points`,
every other Unicode version's entry kept as it stands.

Each Python knows only its own Unicode version, so the table is grown by running this once per Python that
Theurian supports (`python3.12 scripts/hidden_ranges.py`, and so on). `--check` writes nothing and exits 1 when
the file is not what this run would write (the tests run it so, under the Python they run on).
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from theurian.hidden_characters import hidden_points, ranges_of  # noqa: E402 - after the checkout joins the path
from theurian.hidden_ranges import HIDDEN_RANGES  # noqa: E402

TABLE = ROOT / "theurian" / "hidden_ranges.py"
RUNS_PER_LINE = 5

HEADER = '''"""The hidden code points of each Unicode version, as (first, last) runs.

Written by scripts/hidden_ranges.py from their definition, `theurian.hidden_characters.hidden_points`, one Unicode
version per Python that ran it (each knows only its own version); never edited by hand. The tests run the
script's `--check` under their Python, so this Python's entry is the definition's own.
"""

from collections.abc import Mapping
from typing import Final

HIDDEN_RANGES: Final[Mapping[str, tuple[tuple[int, int], ...]]] = {
'''


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def rendered(table: Mapping[str, tuple[tuple[int, int], ...]]) -> str:
    """The module's text for `table`, versions in ascending order."""
    lines = [HEADER]
    for version in sorted(table, key=_version_key):
        runs = [f"(0x{first:04X}, 0x{last:04X})," for first, last in table[version]]
        lines.append(f'    "{version}": (\n')
        for start in range(0, len(runs), RUNS_PER_LINE):
            lines.append("        " + " ".join(runs[start:start + RUNS_PER_LINE]) + "\n")
        lines.append("    ),\n")
    lines.append("}\n")
    return "".join(lines)


def main(arguments: list[str]) -> int:
    table = {**HIDDEN_RANGES, unicodedata.unidata_version: ranges_of(hidden_points())}
    text = rendered(table)
    if arguments == ["--check"]:
        if TABLE.read_text(encoding="utf-8") == text:
            return 0
        print(f"{TABLE.relative_to(ROOT)} is not what the definition makes under Unicode "
              f"{unicodedata.unidata_version}: run {sys.executable} scripts/hidden_ranges.py", file=sys.stderr)
        return 1
    if arguments:
        print("usage: hidden_ranges.py [--check]", file=sys.stderr)
        return 2
    TABLE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
