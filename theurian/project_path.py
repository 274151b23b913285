"""A project folder whose path Theurian cannot keep or DuckDB cannot open a database through, and the rename that
cures it.

A file system's names are bytes; Python keeps each byte that is not UTF-8 as a lone surrogate. Theurian keeps a
project's path as text: the registry is TOML (UTF-8 only). DuckDB misreads a path that is not UTF-8 text, and one
holding `?` (it cuts the path there to name its write-ahead log) or a backslash (read as a separator), so the review
store can be neither built nor served there (measured with DuckDB 2.0: every other printable character, tab and
newline included, round-trips). Such a folder is refused where it would become a project (`init`, `project
register`), and the refusal prints the `mv` that gives it a name without them, pasteable in bash; the build and the
review store refuse the path by the same rule (`duckdb_misreads`), in the same words (`DUCKDB_MISREADS`).

    project_path_refusal(path, then) -> str | None   the refusal of a path no project may have, naming the rename
    path_problem(path) -> str | None                 what is wrong with it, as the refusal and doctor's row say it
    rename_cure(path, then) -> str                   the `mv` of each folder at fault, then `then`
    duckdb_misreads(text) -> bool                    whether DuckDB cannot open a database through that path
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

from theurian.text import is_utf8, shell_word

# The characters DuckDB mishandles in a database path; the build's temp folder and the store share the state
# folder's path, so the project's path must hold none of them.
DUCKDB_PATH_BREAKERS: Final = ("?", "\\")
# Why such a path is refused, in the words `theurian review build` refuses it with (projection.errors).
DUCKDB_MISREADS: Final = ("which DuckDB cannot open a database through (it misreads the path), so the review store "
                          "cannot be built or served here")
# What a byte that is not UTF-8 (Python's surrogateescape range), `?` or `\` becomes in the name the cure suggests.
_AT_FAULT: Final = re.compile("[\udc80-\udcff?\\\\]")
_REPLACEMENT: Final = "_"


def duckdb_misreads(text: str) -> bool:
    """Whether DuckDB cannot open a database through the path `text`: it holds `?`, `\\` or is not UTF-8 text."""
    return any(character in text for character in DUCKDB_PATH_BREAKERS) or not is_utf8(text)


def path_problem(path: Path) -> str | None:
    """What makes `path` one no project may have, as a phrase following the path ("is not UTF-8 text, …", "holds
    `?`, which DuckDB …"); None when it may."""
    text = str(path)
    if not is_utf8(text):
        return ("is not UTF-8 text, which a project's path must be (the project registry keeps it as TOML text, and "
                "DuckDB cannot open the review store through it)")
    held = [f"`{character}`" for character in DUCKDB_PATH_BREAKERS if character in text]
    return f"holds {' and '.join(held)}, {DUCKDB_MISREADS}" if held else None


def project_path_refusal(path: Path, then: str) -> str | None:
    """The refusal of `path` when no project may have it (`path_problem`), None when one may. `then` is the command
    to run on the renamed folder, with `{}` where its path goes (`theurian init {}`)."""
    problem = path_problem(path)
    if problem is None:
        return None
    return f"the path {shell_word(str(path))} {problem}; rename the folder first: `{rename_cure(path, then)}`"


def rename_cure(path: Path, then: str | None) -> str:
    """The command line that renames each folder of `path` whose name holds a byte that is not UTF-8, `?` or `\\`
    (each becomes `_`, then `-2`, `-3`… while that name is taken), outermost first, then runs `then` (unless None)
    on the renamed path."""
    real = Path(path.parts[0])  # where the next folder is on disk now: its siblings are what a new name must miss
    renamed = real  # the same folder, spelt as it will be once the renames before it have run
    moves: list[str] = []
    for name in path.parts[1:]:
        if _AT_FAULT.search(name):
            new_name = _free_name(real, _AT_FAULT.sub(_REPLACEMENT, name))
            moves.append(f"mv {shell_word(str(renamed / name))} {shell_word(str(renamed / new_name))}")
            renamed /= new_name
        else:
            renamed /= name
        real /= name
    return " && ".join(moves if then is None else [*moves, then.format(shell_word(str(renamed)))])


def _free_name(parent: Path, wanted: str) -> str:
    """`wanted`, or `wanted-N` for the first N from 2 that no entry of `parent` holds: `mv` onto a folder that
    exists would move the project inside it."""
    name, number = wanted, 1
    while os.path.lexists(parent / name):
        number += 1
        name = f"{wanted}-{number}"
    return name
