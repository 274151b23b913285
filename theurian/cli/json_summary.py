"""The one shape of every command's `--json`: `{"command": "review allow", "ok": true, "summary": {...}}`.

`command` is the command as typed (its words after `theurian`, taken from the command line itself), `ok` is true
exactly when the command exits 0 (a set-up step that finds its work done is ok, with `"changed": false` in its
summary; `doctor` with a failing check, `daemon status` of a daemon not running, `sync` with a failed stage,
`daemon stop` that had to kill are not), `summary` the command's own fields in camelCase. A bare list is never a
summary: it is a named field of one (`propose list`: `{"proposals": [...]}`).

A refusal under `--json` (any error the command raises once its options are parsed, usage refusals of its own
included) prints its one line on stderr with its exit code, as without `--json`, and also the document
`{"command", "ok": false, "summary": {"error": TEXT, "exitCode": N}}` on stdout (with the contract's `code` and
`details` for a knowledge error), so a script parsing stdout always gets JSON. The top-level handler
(`theurian.cli.main.run`) calls `echo_refusal` for every error it turns into a line; a command that already printed
its document (an ingest with a failed run) prints no second one; so does the command line's own check that
every argument is UTF-8 text, made before click parses it (`echo_early_refusal`). Click's own parse errors (an
unknown option, a missing argument: exit 2 before the command ran) and Ctrl-C (130) print no document.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final

import typer

SUMMARY_KEYS: Final = ("command", "ok", "summary")
SHAPE_HELP: Final = '{"command", "ok", "summary"}'


@dataclass
class _Asked:
    """This process's command run with `--json`, if any, and whether its document is out."""

    command: str | None = None
    printed: bool = False


_ASKED = _Asked()


def _remember(ctx: typer.Context, value: bool) -> bool:
    """The `--json` option's callback: notes the command's words, so a refusal can be printed as its document."""
    words: list[str] = []
    context: Any = ctx
    while context is not None and context.parent is not None:  # the root is `theurian` itself
        words.append(context.info_name or "")
        context = context.parent
    _ASKED.command = " ".join(reversed(words)) if value else None
    _ASKED.printed = False
    return value


JsonSummaryOption = Annotated[bool, typer.Option(
    "--json", callback=_remember, help=f"Print the summary as JSON on stdout: {SHAPE_HELP}.")]


def summary_document(command: str, summary: Mapping[str, Any], *, ok: bool = True) -> dict[str, Any]:
    """The `--json` object of `command`."""
    return {"command": command, "ok": ok, "summary": dict(summary)}


def echo_summary(summary: Mapping[str, Any], *, ok: bool = True) -> None:
    """Print the `--json` object of the command running (the one whose `--json` was given) on stdout. `ok` must
    be false exactly when the command then exits non-zero.

    Raises:
        RuntimeError: no command asked for JSON (a caller outside the command line).
    """
    if _ASKED.command is None:
        raise RuntimeError("echo_summary is for a command run with --json")
    typer.echo(json.dumps(summary_document(_ASKED.command, summary, ok=ok), indent=2, ensure_ascii=False))
    _ASKED.printed = True


def refusal_summary(text: str, exit_code: int, error: BaseException) -> dict[str, Any]:
    """A refusal's summary: its one line, its exit code, and the contract's code and details when it has them."""
    from knowledge.errors import KnowledgeError

    summary: dict[str, Any] = {"error": text, "exitCode": exit_code}
    if isinstance(error, KnowledgeError):  # its contract code (REVISION_CONFLICT, INVALID_INPUT, … or null)
        summary["code"] = error.code
        summary["details"] = error.details
    return summary


def echo_early_refusal(command: str, text: str, exit_code: int) -> None:
    """`echo_refusal` for a refusal made before click parsed the command line, so before `--json`'s callback
    noted the command: `command` is its words, read off the line by the caller."""
    from theurian.errors import UsageError

    _ASKED.command, _ASKED.printed = command, False
    echo_refusal(text, exit_code, UsageError(text))


def echo_refusal(text: str, exit_code: int, error: BaseException) -> None:
    """Print the refusal's document on stdout when the command was run with `--json` and printed none yet."""
    if _ASKED.command is None or _ASKED.printed:
        return
    echo_summary(refusal_summary(text, exit_code, error), ok=False)
