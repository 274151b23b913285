"""Reading a migration's YAML: the safe subset of YAML, less anchors and aliases.

Every migration is read here, whether `migrate apply` reads it from `.theurian/migrations/` or `propose accept`
reads it from a proposal, so both refuse the same things:

- Anchors and aliases (`&name`, `*name`). A migration has no use for them, and a few hundred bytes of nested
  aliases expand into billions of nodes that validation then walks (an alias bomb). They are found in the
  parser's event stream, before anything is composed or constructed, so refusing one costs nothing.
"""

from __future__ import annotations

from typing import Any, Final

import yaml

from knowledge.errors import MigrationInvalidError

# libyaml's safe loader when the wheel has it (an order of magnitude faster); the same safe subset of YAML.
_BASE: Final[type[yaml.SafeLoader]] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(file_name: str, data: bytes) -> Any:
    """The document in `data`, parsed with the safe loader once it is known to hold no anchor or alias.

    Raises:
        MigrationInvalidError: naming `file_name`: not UTF-8, not YAML, or an anchor or alias (with its line).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MigrationInvalidError(file_name, None, "not readable as UTF-8 YAML (not UTF-8)") from exc
    try:
        _refuse_anchors(file_name, text)
        return yaml.load(text, Loader=_BASE)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise MigrationInvalidError(file_name, None, f"not readable as UTF-8 YAML ({_described(exc)})") from exc


def _refuse_anchors(file_name: str, text: str) -> None:
    for event in yaml.parse(text, Loader=_BASE):
        kind = "an alias" if isinstance(event, yaml.AliasEvent) else "an anchor"
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            line = event.start_mark.line + 1 if event.start_mark is not None else "?"
            raise MigrationInvalidError(
                file_name,
                None,
                f"line {line}: {kind} (&name or *name) is not allowed in a migration; "
                "write each value out in full",
            )


def _described(error: yaml.YAMLError) -> str:
    return str(error).splitlines()[0][:300]
