"""Commands in the CLI's output as the operator pastes them from where they stand: an operator who named
`--project ROOT` (from outside the project) gets every backticked `theurian …` command that takes `--project` with
`--project ROOT` added, since pasted bare it would look for a project in their current folder, or refuse.

    with_project(text, root) -> str              each such command in `text` carrying `--project ROOT`
    given_project(argv) -> Path | None           the folder `--project` names on a command line
    named_command(words) -> (command, names)     the click command a line's leading words name
    takes_option(command, option) -> bool        whether that command has the option

Which commands take `--project` is read from the command tree itself (`typer.main.get_command`), never kept by hand,
so a command that gains or loses the option is named right without an edit here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Final

from theurian.text import shell_word

PROJECT_OPTION: Final = "--project"
# A command named in text: a code span starting with the program's name (a span of one word never names a command).
_COMMAND: Final = re.compile(r"`(theurian [^`]*)`")
_CHAINED: Final = " && "  # `theurian project unregister A && theurian project register B`: each is its own command


def with_project(text: str, root: Path | None) -> str:
    """`text` with `--project ROOT` (one shell word) after each backticked `theurian …` command whose words name a
    command taking `--project`; `text` itself when `root` is None (the operator named no project). A command already
    naming `--project`, a group, and one that takes no `--project` (`theurian daemon start`) are left as written."""
    if root is None:
        return text
    where = f" {PROJECT_OPTION} {shell_word(str(root))}"

    def added(span: re.Match[str]) -> str:
        parts = span.group(1).split(_CHAINED)
        return "`" + _CHAINED.join(part + where if _wants_project(part) else part for part in parts) + "`"

    return _COMMAND.sub(added, text)


def given_project(arguments: list[str]) -> Path | None:
    """The project folder `--project PATH` (or `--project=PATH`) names among `arguments` (the last, as click takes
    it; nothing after `--`), made absolute; None when none does."""
    options = arguments[:arguments.index("--")] if "--" in arguments else arguments
    named: str | None = None
    for index, argument in enumerate(options):
        if argument == PROJECT_OPTION and index + 1 < len(options):
            named = options[index + 1]
        elif argument.startswith(PROJECT_OPTION + "="):
            named = argument.split("=", 1)[1]
    return Path(named).resolve() if named else None


def named_command(words: list[str]) -> tuple[Any, list[str]]:
    """The click command `words` name, read as click reads a line (group names first), and the names that named
    it; the root group and no names when the first word names no command."""
    command = _tree()
    names: list[str] = []
    for word in words:
        subcommands = getattr(command, "commands", None)
        if not isinstance(subcommands, Mapping) or word not in subcommands:
            break
        names.append(word)
        command = subcommands[word]
    return command, names


def takes_option(command: Any, option: str) -> bool:
    """Whether `command` (from `named_command`) has `option` among its own parameters."""
    return any(option in getattr(param, "opts", ()) for param in getattr(command, "params", ()))


def _wants_project(line: str) -> bool:
    words = line.split()
    if words[:1] != ["theurian"] or any(w == PROJECT_OPTION or w.startswith(PROJECT_OPTION + "=") for w in words):
        return False
    command, names = named_command(words[1:])
    is_group = isinstance(getattr(command, "commands", None), Mapping)
    return bool(names) and not is_group and takes_option(command, PROJECT_OPTION)


@cache
def _tree() -> Any:
    # Imported when first asked: the entry point imports every command module, and some of them import this one.
    import typer.main

    from theurian.cli.main import app

    return typer.main.get_command(app)


def named_root(option: Path | None) -> Path | None:
    """The project a command's cures name (`with_project`): the one its `--project` option named, as
    `project_option.project_root` resolves it; None when the operator named none (they stand in the project)."""
    from theurian.cli.project_option import project_root

    return None if option is None else project_root(option)
