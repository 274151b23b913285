"""Every bracketed word a command's help text holds (`[review]`, `[github_app]`: config tables) reaches the rendered
`--help`: typer renders help through rich, whose markup takes a lowercase `[word]` for a style tag and drops it, so
"Apply [review] secrets" printed "Apply  secrets". A help text writes `\\[word]` for the literal."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.test_cli_surface import _command_paths
from tests.support.cli_app import at
from tests.support.cli_help import help_words

# rich's own markup tag: `[` then a lowercase letter, `#`, `/` or `@` (rich.markup.RE_TAGS); `\[` escapes it.
_TAG = re.compile(r"\\?\[([a-z#/@][^\[\]]*)\]")


def _texts(command: Any) -> list[str]:
    return [command.help or "", *(getattr(param, "help", None) or "" for param in command.params)]


@pytest.mark.parametrize("path", [p for p in _command_paths() if p], ids=" ".join)
def test_no_bracketed_word_of_a_help_text_is_lost_to_rich_markup(path: tuple[str, ...]) -> None:
    command = at(*path)
    bracketed = [f"[{match}]" for text in _texts(command) for match in _TAG.findall(text)]
    if not bracketed:
        return
    shown = help_words(*path)
    assert [word for word in bracketed if word not in shown] == [], shown


def test_the_walk_sees_the_config_tables_the_help_texts_name() -> None:
    named = {" ".join(path): [m for text in _texts(at(*path)) for m in _TAG.findall(text)]
             for path in _command_paths() if path}
    assert "review" in named["review scan"] and "github_app" in named["review ingest"]


@pytest.mark.parametrize("path", [p for p in _command_paths() if p], ids=" ".join)
def test_no_paragraph_of_a_help_text_breaks_where_its_source_line_did(path: tuple[str, ...]) -> None:
    """typer's rich help keeps a docstring's line breaks: a paragraph wrapped at the source's width broke mid-
    sentence at the terminal's ("reported by its project-relative path" / "and skipped")."""
    help_text = at(*path).help or ""
    assert [paragraph for paragraph in help_text.split("\n\n") if "\n" in paragraph] == []

