"""A typer group whose top-level commands are imported when the command line names them, not at start-up.

Every `theurian` run is a fresh process, and importing every command module (with the stores, the schema
validators and the HTTP clients they import) and building every command's click parameters cost most of its
start. Here each command is registered as a loader: a function that imports its module and registers it, with
typer's own `command()` or `add_typer()`, on a Typer of its own; the command is then built from that as typer
builds any (`typer.main.get_group`), so it is the command an eager registration makes. `theurian --help` and a
walk over `commands` build every one.

A loader's imports run with Ctrl-C held, as the console script's first imports do (`theurian.cli.entry`): a
KeyboardInterrupt landing inside a native module's initialisation crashed the process. One pressed meanwhile is
raised once the imports are done, where the command line turns it into exit 130.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, MutableMapping
from functools import cache
from importlib import import_module
from typing import Any

import typer
import typer.main
from typer._click import Command  # typer vendors click
from typer.core import TyperGroup

from theurian.interrupts import interrupts_held

Loader = Callable[[typer.Typer, str], None]  # registers the command named on the app given


class LazyCommands(MutableMapping[str, Command]):
    """A group's commands by name: those registered on it, then the loaders' (in their order), each built the
    first time it is looked up. Naming or counting them builds none."""

    def __init__(self, built: Mapping[str, Command], loaders: Mapping[str, Loader], settings: typer.Typer) -> None:
        self._built = dict(built)
        self._names = [*built, *(name for name in loaders if name not in built)]
        self._loaders = loaders
        self._settings = settings

    def __getitem__(self, name: str) -> Command:
        if name not in self._built:
            loader = self._loaders[name]  # KeyError for a name neither registered nor loadable, as a dict's
            with interrupts_held():
                self._built[name] = _built(name, loader, self._settings)
        return self._built[name]

    def __setitem__(self, name: str, command: Command) -> None:
        if name not in self._names:
            self._names.append(name)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self._names:
            raise KeyError(name)
        self._names.remove(name)
        self._built.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names))

    def __len__(self) -> int:
        return len(self._names)


def command(module: str, function: str) -> Loader:
    """The loader of a top-level command: `function` of `theurian.cli.MODULE`, registered under the name it is
    listed by (`lazy_group`'s loaders are keyed by it)."""

    def load(app: typer.Typer, name: str) -> None:
        app.command(name)(getattr(_module(module), function))

    return load


def group(module: str, attribute: str = "app", joined: Mapping[str, tuple[str, str]] | None = None) -> Loader:
    """The loader of a command group: the Typer `attribute` of `theurian.cli.MODULE`, with each of `joined`'s
    commands (name: (module, function)) registered on it first, from the module that owns it."""

    def load(app: typer.Typer, name: str) -> None:
        typer_group = getattr(_module(module), attribute)
        for command_name, (owner, function) in (joined or {}).items():
            typer_group.command(command_name)(getattr(_module(owner), function))
        app.add_typer(typer_group, name=name)

    return load


def _module(name: str) -> Any:
    return import_module(f"theurian.cli.{name}")


@cache
def _built(name: str, loader: Loader, settings: typer.Typer) -> Command:
    """The command `loader` registers under `name`, built with the settings of the app it joins; once per
    process (a loader may register on a module's own Typer, which a second run would register on twice)."""
    holder = typer.Typer(pretty_exceptions_short=settings.pretty_exceptions_short,
                         rich_markup_mode=settings.rich_markup_mode, suggest_commands=settings.suggest_commands)
    loader(holder, name)
    built = typer.main.get_group(holder).commands[name]
    _reflow_help(built)
    return built


def _reflow_help(command: Command) -> None:
    """Join each paragraph of `command`'s help (and its subcommands') into one line: typer's rich help keeps a
    docstring's line breaks, so a paragraph wrapped at the source's width broke mid-sentence at the terminal's.
    The terminal's width wraps it instead. No help text here has a list or a table to keep."""
    if command.help:
        command.help = "\n\n".join(" ".join(line.strip() for line in paragraph.splitlines())
                                    for paragraph in command.help.split("\n\n"))
    for subcommand in getattr(command, "commands", {}).values():
        _reflow_help(subcommand)


def lazy_group(loaders: Mapping[str, Loader], settings: Callable[[], typer.Typer]) -> type[TyperGroup]:
    """A TyperGroup class (for `typer.Typer(cls=...)`) whose commands are `LazyCommands` over `loaders`;
    `settings` returns the app whose typer settings the loaded commands are built with."""

    class LazyGroup(TyperGroup):
        def __init__(self, **attrs: Any) -> None:
            super().__init__(**attrs)
            self.commands = LazyCommands(self.commands, loaders, settings())

        def list_commands(self, ctx: Any) -> list[str]:
            return list(self.commands)

    return LazyGroup
