"""Reading a migration's YAML: the safe subset of YAML, less two features, and errors a person can find.

Every migration is read here, whether `migrate apply` reads it from `.theurian/migrations/` or `propose accept`
reads it from a proposal, so both refuse the same things:

- Anchors and aliases (`&name`, `*name`). A migration has no use for them, and a few hundred bytes of nested
  aliases expand into billions of nodes that validation then walks (an alias bomb). They are found in the
  parser's event stream, before anything is composed or constructed, so refusing one costs nothing.
- Nesting deeper than MAX_DEPTH levels, which would crash the composer rather than be refused by it.
- A key twice in one mapping. YAML loaders keep the last value silently, so `owner: alice` followed by
  `owner: mallory` reads as mallory while a reviewer skimming the diff sees alice.

A document that is not YAML at all is reported with the parser's problem and its line:column, not only the
first line of PyYAML's message ("while scanning for the next token"), which says neither what nor where.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final

import yaml

from knowledge.errors import MigrationInvalidError

# libyaml's safe loader when the wheel has it (an order of magnitude faster); the same safe subset of YAML.
_BASE: Final[type[yaml.SafeLoader]] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_KEY_SHOWN: Final = 80
# The deepest migration nests about six levels. Composing tens of thousands of levels overflows libyaml's C stack
# (the process dies with SIGSEGV) and a thousand Python's recursion limit; the parser's event stream, read first,
# is flat, so the depth is counted there and refused before anything is composed.
MAX_DEPTH: Final = 64


class _DuplicateKey(Exception):  # noqa: N818 - internal signal, turned into MigrationInvalidError below
    def __init__(self, key: object, line: int) -> None:
        super().__init__(key, line)
        self.key = key
        self.line = line


class _StrictLoader(_BASE):  # type: ignore[valid-type,misc]
    """The safe loader whose mapping constructor refuses a key it has already seen in the same mapping."""

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: set[Hashable] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, Hashable):
                    if key in seen:
                        raise _DuplicateKey(key, key_node.start_mark.line + 1)
                    seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


def read_yaml(file_name: str, data: bytes) -> Any:
    """The document in `data`, parsed with the strict safe loader.

    Raises:
        MigrationInvalidError: naming `file_name` and the line: not UTF-8, not YAML, an anchor or alias,
            nesting past MAX_DEPTH, or a key repeated in one mapping.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = f"not readable as UTF-8 YAML (not UTF-8 at byte {exc.start})"
        raise MigrationInvalidError(file_name, None, problem) from exc
    try:
        _refuse_unsafe_structure(file_name, text)
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a safe loader
    except _DuplicateKey as exc:
        shown = repr(exc.key) if len(repr(exc.key)) <= MAX_KEY_SHOWN else "a long key"
        raise MigrationInvalidError(
            file_name,
            None,
            f"line {exc.line}: the key {shown} appears twice in one mapping (YAML would silently keep the last "
            "value); write it once",
        ) from None
    except yaml.YAMLError as exc:
        raise MigrationInvalidError(file_name, None, f"not readable as UTF-8 YAML ({_described(exc)})") from exc


def _refuse_unsafe_structure(file_name: str, text: str) -> None:
    depth = 0
    for event in yaml.parse(text, Loader=_BASE):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark is not None else "?"
                raise MigrationInvalidError(
                    file_name, None, f"line {line}: nested deeper than {MAX_DEPTH} levels; no migration is"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
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
    """The parser's problem and where it is (line:column, 1-based), or its first line when it has no mark."""
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        mark = error.problem_mark
        problem = error.problem or error.context or "not YAML"
        return f"{problem} at line {mark.line + 1}:{mark.column + 1}"[:300]
    return str(error).splitlines()[0][:300] if str(error) else type(error).__name__
