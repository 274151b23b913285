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
from theurian.text import MAX_SHOWN_CHARS, escaped, quoted

# libyaml's safe loader when the wheel has it (an order of magnitude faster); the same safe subset of YAML.
_BASE: Final[type[yaml.SafeLoader]] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# The deepest migration nests about six levels. Composing tens of thousands of levels overflows libyaml's C stack
# (the process dies with SIGSEGV) and a thousand Python's recursion limit; the parser's event stream, read first,
# is flat, so the depth is counted there and refused before anything is composed.
MAX_DEPTH: Final = 64
UNCONSTRUCTIBLE_SCALAR: Final = (
    "not readable as UTF-8 YAML (an unquoted value reads as a date that does not exist or an integer of more than "
    "4300 digits); quote it to keep it a string, or correct it"
)


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
            nesting past MAX_DEPTH, or a key repeated in one mapping; naming `file_name` only: an unquoted date
            that does not exist or an integer YAML cannot construct.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = f"not readable as UTF-8 YAML (not UTF-8 at byte {exc.start})"
        raise MigrationInvalidError(file_name, None, problem) from exc
    try:
        try:
            return _EventReader(file_name, text).document()
        except _Unusual:
            _refuse_unsafe_structure(file_name, text)
            return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a safe loader
    except _DuplicateKey as exc:
        raise MigrationInvalidError(
            file_name,
            None,
            f"line {exc.line}: {_key_shown(exc.key)} appears twice in one mapping (YAML would silently keep the last "
            "value); write it once",
        ) from None
    except yaml.YAMLError as exc:
        raise MigrationInvalidError(file_name, None, f"not readable as UTF-8 YAML ({_described(exc)})") from exc
    except ValueError as exc:
        # PyYAML's constructors call `datetime(...)` and `int(...)` unguarded: `2026-02-30` or an integer of more
        # than 4,300 digits raised out of the loader as a traceback.
        raise MigrationInvalidError(file_name, None, UNCONSTRUCTIBLE_SCALAR) from exc


def _key_shown(key: object) -> str:
    """A repeated key as the refusal names it: a string quoted (`theurian.text.quoted`), a number or a date as
    YAML wrote it, one past the bound by its length."""
    text = key if isinstance(key, str) else str(key)
    if len(text) > MAX_SHOWN_CHARS:
        return quoted(text, described_as="a key")
    return f"the key {quoted(text) if isinstance(key, str) else escaped(text)}"


def _refuse_unsafe_structure(file_name: str, text: str) -> None:
    depth = 0
    for event in yaml.parse(text, Loader=_BASE):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            _refuse_depth(file_name, event, depth)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        _refuse_anchor(file_name, event)


def _line(event: yaml.Event) -> int | str:
    return event.start_mark.line + 1 if event.start_mark is not None else "?"


def _refuse_depth(file_name: str, event: yaml.Event, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise MigrationInvalidError(
            file_name, None, f"line {_line(event)}: nested deeper than {MAX_DEPTH} levels; no migration is"
        )


def _refuse_anchor(file_name: str, event: yaml.Event) -> None:
    if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
        kind = "an alias" if isinstance(event, yaml.AliasEvent) else "an anchor"
        raise MigrationInvalidError(
            file_name,
            None,
            f"line {_line(event)}: {kind} (&name or *name) is not allowed in a migration; "
            "write each value out in full",
        )


class _Unusual(Exception):  # noqa: N818 - internal signal: read this document the general way instead
    """A document using what the one-pass reader leaves to PyYAML's own loader: a tag (`!`, `!!str`, …), a
    merge key, a key that is a mapping or a sequence, more than one document."""


_STR_TAG: Final = "tag:yaml.org,2002:str"
_MERGE_TAG: Final = "tag:yaml.org,2002:merge"


class _EventReader:
    """One pass over libyaml's event stream that refuses what `read_yaml` refuses (anchors and aliases, nesting
    past MAX_DEPTH, a key twice in one mapping) and builds the document as `yaml.load` with the safe loader
    would: each plain scalar's tag comes from PyYAML's own resolver, and every scalar that is not a string is
    made by PyYAML's own safe constructor (both remembered per distinct text). What it does not handle it leaves
    to that loader (`_Unusual`). Composing a node tree and walking it again in PyYAML's constructor cost five
    times this pass."""

    def __init__(self, file_name: str, text: str) -> None:
        self._file_name = file_name
        self._loader = _BASE(text)
        self._plain: dict[str, Any] = {}
        self._quoted: dict[str, Any] = {}
        self._firsts = _resolved_by_first()

    def document(self) -> Any:
        try:
            return self._read()
        finally:
            self._loader.dispose()

    def _read(self) -> Any:
        get = self._loader.get_event
        plain = self._plain
        scalar_event, mapping_start, sequence_start = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
        mapping_end, sequence_end = yaml.MappingEndEvent, yaml.SequenceEndEvent
        # The open collection's state in locals, the enclosing ones' saved on `stack` (one entry per open
        # collection, so its length is the depth): `container` (None at the top), whether it is a mapping, and
        # the mapping's key read and awaiting its value (or _NO_KEY). A key already in the mapping is a
        # repeated key: every earlier key has its value by the time the next key is read.
        stack: list[tuple[Any, bool, Any]] = []
        container: Any = None
        is_mapping = False
        pending: Any = _NO_KEY
        result: Any = None
        documents = 0
        while True:
            event = get()  # type: ignore[no-untyped-call]
            kind = type(event)
            if kind is scalar_event:
                # The common case inline (a plain scalar seen before, or a quoted one): half a million a
                # migration of 10,000 items.
                if event.anchor is None and event.tag is None:
                    value = event.value
                    if event.implicit[0]:
                        value = plain.get(value, _NO_KEY)
                        if value is _NO_KEY:
                            value = self._scalar(event)
                else:
                    value = self._scalar(event)
            elif kind is mapping_start or kind is sequence_start:
                if event.anchor is not None:
                    _refuse_anchor(self._file_name, event)
                if event.tag is not None:
                    raise _Unusual
                stack.append((container, is_mapping, pending))
                _refuse_depth(self._file_name, event, len(stack))
                is_mapping = kind is mapping_start
                container = {} if is_mapping else []
                pending = _NO_KEY
                continue
            elif kind is mapping_end or kind is sequence_end:
                value = container
                container, is_mapping, pending = stack.pop()
                if is_mapping and pending is _NO_KEY:
                    raise _Unusual  # a mapping or a sequence as a key
            elif kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise _Unusual  # yaml.load refuses it, in its own words
                continue
            elif kind is yaml.StreamEndEvent:
                return result
            elif kind is yaml.AliasEvent:
                _refuse_anchor(self._file_name, event)
                continue
            else:  # stream start, document end
                continue
            if container is None:
                result = value
            elif not is_mapping:
                container.append(value)
            elif pending is _NO_KEY:  # a key: a scalar (a collection as a key was left to PyYAML)
                if value in container:
                    raise _DuplicateKey(value, event.start_mark.line + 1)
                pending = value
            else:
                container[pending] = value
                pending = _NO_KEY

    def _scalar(self, event: yaml.ScalarEvent) -> Any:
        if event.anchor is not None:
            _refuse_anchor(self._file_name, event)
        value: str = event.value
        if event.tag is not None:
            raise _Unusual
        if not event.implicit[0]:  # quoted: a string whatever it reads as
            return value
        try:
            return self._plain[value]
        except KeyError:
            pass
        # What `resolve` would answer for most unique text (ids, paths, digests), without its call and lookups.
        if self._firsts is not None and value[:1] not in self._firsts:
            self._plain[value] = value
            return value
        tag = self._loader.resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
        if tag == _MERGE_TAG:
            raise _Unusual
        made = value if tag == _STR_TAG else self._loader.construct_object(yaml.ScalarNode(tag, value))
        self._plain[value] = made
        return made


_NO_KEY: Final = object()


def _resolved_by_first() -> frozenset[str] | None:
    """The first characters (`''` for an empty scalar) for which PyYAML's resolver tries a pattern on a plain
    scalar; every other plain scalar resolves to a string. None when a resolver applies whatever the first
    character (a wildcard or a path resolver): then every scalar goes through `resolve`."""
    resolvers = _BASE.yaml_implicit_resolvers
    if None in resolvers or _BASE.yaml_path_resolvers:
        return None
    return frozenset(resolvers)



def _described(error: yaml.YAMLError) -> str:
    """The parser's problem and where it is (line:column, 1-based), or its first line when it has no mark."""
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        mark = error.problem_mark
        problem = error.problem or error.context or "not YAML"
        return f"{problem} at line {mark.line + 1}:{mark.column + 1}"[:300]
    return str(error).splitlines()[0][:300] if str(error) else type(error).__name__
