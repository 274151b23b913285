"""The one shape of a summary command's `--json`: `{"command": "review allow", "ok": true, "summary": {...}}`.

`command` is the command as typed (its words after `theurian`), `ok` whether it did what was asked (a set-up
step that finds its work done is ok, with `"changed": false` in its summary), `summary` the command's own fields
in camelCase. A refusal stays one line on stderr with its exit code, as without `--json`, and prints no JSON.

The commands that printed JSON before this shape existed (`review ingest`, `review status`, `review build`,
`doctor`, `sync`, `migrate *`, `index *`, `project list|status`, `propose change|migration|candidate|list`,
`daemon status`, the read commands …) keep the documents they print (scripts read them; docs/operating.md lists
each): every command that prints a summary now has `--json`, and each added one prints this shape.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Final

import typer

SUMMARY_KEYS: Final = ("command", "ok", "summary")

JsonSummaryOption = Annotated[bool, typer.Option(
    "--json", help='Print the summary as JSON on stdout: {"command", "ok", "summary"}.')]


def summary_document(command: str, summary: Mapping[str, Any], *, ok: bool = True) -> dict[str, Any]:
    """The `--json` object of `command`."""
    return {"command": command, "ok": ok, "summary": dict(summary)}


def echo_summary(command: str, summary: Mapping[str, Any], *, ok: bool = True) -> None:
    """Print the `--json` object of `command` on stdout."""
    typer.echo(json.dumps(summary_document(command, summary, ok=ok), indent=2, ensure_ascii=False))
