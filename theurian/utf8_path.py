"""A project folder whose path is not UTF-8 text, and the rename that cures it.

A file system's names are bytes; Python keeps each byte that is not UTF-8 as a lone surrogate. Theurian keeps a
project's path as text: the registry is TOML (UTF-8 only), and DuckDB misreads such a path, so the review store
can be neither built nor served there. Such a folder is refused where it would become a project (`init`,
`project register`), and the refusal prints the `mv` that gives it a UTF-8 name, pasteable in bash.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

from theurian.text import is_utf8, shell_word

# What a byte that is not UTF-8 becomes in the name the cure suggests (Python's surrogateescape range).
_UNDECODED: Final = re.compile("[\udc80-\udcff]")
_REPLACEMENT: Final = "_"


def not_utf8_refusal(path: Path, then: str) -> str | None:
    """The refusal of `path` when it is not UTF-8 text, None when it is. `then` is the command to run on the renamed
    folder, with `{}` where its path goes (`theurian init {}`)."""
    if is_utf8(str(path)):
        return None
    return (f"the path {shell_word(str(path))} is not UTF-8 text, which a project's path must be (the project "
            "registry keeps it as TOML text, and DuckDB cannot open the review store through it); rename the "
            f"folder first: `{rename_cure(path, then)}`")


def rename_cure(path: Path, then: str) -> str:
    """The command line that renames each folder of `path` whose name is not UTF-8 text (each such byte becomes
    `_`, then `-2`, `-3`… while that name is taken), outermost first, then runs `then` on the renamed path."""
    real = Path(path.parts[0])  # where the next folder is on disk now: its siblings are what a new name must miss
    renamed = real  # the same folder, spelt as it will be once the renames before it have run
    moves: list[str] = []
    for name in path.parts[1:]:
        if not is_utf8(name):
            new_name = _free_name(real, _UNDECODED.sub(_REPLACEMENT, name))
            moves.append(f"mv {shell_word(str(renamed / name))} {shell_word(str(renamed / new_name))}")
            renamed /= new_name
        else:
            renamed /= name
        real /= name
    return " && ".join([*moves, then.format(shell_word(str(renamed)))])


def _free_name(parent: Path, wanted: str) -> str:
    """`wanted`, or `wanted-N` for the first N from 2 that no entry of `parent` holds: `mv` onto a folder that
    exists would move the project inside it."""
    name, number = wanted, 1
    while os.path.lexists(parent / name):
        number += 1
        name = f"{wanted}-{number}"
    return name
