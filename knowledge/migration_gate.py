"""What `migrate apply` and `migrate validate` refuse in a migration before anything enters the state: a secret in
what the state would keep, and a control character in a field that is not free text.

Knowledge is served to every agent of the project, so a migration whose revision (title, body) or whose free-text
fields (owner, namespace, labels, notes, descriptions, anchors) hold a secret is refused with the words
`propose accept` and `index build` use (`knowledge.secret_gate`), naming the file and line, never the value. The
strings the migration schema pins to an identifier, a hash, a time or a vocabulary are not text and are not
scanned (as `evidence.redaction` leaves GitHub's identifiers alone), which keeps the scan off the ULID and hash of
every operation.

Control characters: no field of a migration may hold a C0 or C1 control character (U+0000-U+001F, U+007F-U+009F)
but the free-text ones, which may hold a tab, a line feed or a carriage return (`MULTILINE_FIELDS`); a body may
hold those three too. The write tools' drafts are checked by the same rule (`knowledge.proposals`) before their
folder exists.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import orjson

from knowledge.errors import MigrationInvalidError
from knowledge.migrations import CONTENT_PREFIX, Migration
from knowledge.secret_gate import refuse_secrets
from theurian.project import KNOWLEDGE_DIR, MIGRATIONS_DIR

# Keys whose every value the migration schema pins to a ULID, a hash, a time, a file name or a vocabulary.
NOT_TEXT: Final = frozenset({
    "op", "id", "revisionId", "expectedRevision", "dependsOn", "contentFile", "contentSha256", "commitSha",
    "createdAt", "validFrom", "validTo", "kind", "status", "sensitivity", "trustLevel", "contentType",
    "relationType", "originatesInTheurian",
})
# Free text a person writes in several lines: the only fields (with a body) where a tab or a line break belongs.
MULTILINE_FIELDS: Final = frozenset({"description", "note", "reason"})
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_LINES: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# A control character as orjson writes it: every C0 one escaped (`\\n`, `\\u001f`), DEL and the C1 ones as
# they are (U+0080-U+009F in UTF-8). A literal backslash before one of those letters matches too: a superset.
_ESCAPED_CONTROL: Final = re.compile(rb"\\(?:u00[01][0-9a-fA-F]|[btnfr])|\x7f|\xc2[\x80-\x9f]")
MIGRATION_NOTHING_DONE: Final = "nothing was changed"
_TITLE: Final = "\x00title"  # `_gated`'s fields for a revision's title and body: no schema key holds a NUL
_BODY: Final = "\x00body"


def control_character(text: str, *, multiline: bool) -> str | None:
    """The first control character `text` may not hold, as `U+XXXX`, or None. `multiline` admits tab, LF, CR."""
    found = (_CONTROL_BUT_LINES if multiline else _CONTROL).search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def control_fault(key: str, text: str) -> str | None:
    """What is wrong with field `key`'s value `text` under the control-character rule, or None."""
    found = control_character(text, multiline=key in MULTILINE_FIELDS)
    if found is None:
        return None
    allowed = " (a tab or a line break is allowed there)" if key in MULTILINE_FIELDS else ""
    return f"`{key}` holds the control character {found}, which no {key} may hold{allowed}; remove it"


def strings_of(node: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Every `(key, string)` in `node` that is text (not under a `NOT_TEXT` key); a list's strings under its key,
    in document order."""
    found: list[tuple[str, str]] = []
    _collect(node, key, found)
    return iter(found)


def _collect(node: Any, key: str, found: list[tuple[str, str]]) -> None:
    # Exact types first (what YAML and JSON give): an ABC's isinstance cost a third of the walk over 10,000
    # items' operations, a million nodes. A string child is taken where it is met, not by a call of its own.
    kind = type(node)
    if kind is str:
        found.append((key, node))
    elif kind is dict or isinstance(node, Mapping):
        for name, value in node.items():
            if name not in NOT_TEXT:
                if type(value) is str:
                    found.append((str(name), value))
                else:
                    _collect(value, str(name), found)
    elif kind is list or isinstance(node, tuple):
        for value in node:
            if type(value) is str:
                found.append((key, value))
            else:
                _collect(value, key, found)


def controls_fault(author: str, description: str | None, operations: Iterable[Mapping[str, Any]],
                   bodies: Mapping[str, str]) -> tuple[int | None, str] | None:
    """The first control character a migration's `author`, `description`, operations or bodies (by `contentFile`)
    may not hold, as (operation index or None for the document, problem), or None.

    The one rule the write tools' drafts (`knowledge.proposals`) and `migrate apply`/`validate` both apply."""
    operations = list(operations)
    if _holds_no_control(author, description, operations, bodies):
        return None
    for key, text in (("author", author), ("description", description)):
        fault = control_fault(key, text) if text is not None else None
        if fault is not None:
            return None, fault
    for index, operation in enumerate(operations):
        for key, text in strings_of(operation):
            fault = control_fault(key, text)
            if fault is not None:
                return index, fault
        body = bodies.get(operation.get("contentFile", "")) if operation.get("op") == "upsertRevision" else None
        found = control_character(body, multiline=True) if body is not None else None
        if found is not None:
            return index, (f"the body {operation['contentFile']} holds the control character {found}, which no "
                           "body may hold (a tab or a line break is allowed); remove it")
    return None


def _holds_no_control(author: str, description: str | None, operations: list[Mapping[str, Any]],
                      bodies: Mapping[str, str]) -> bool:
    """True when no string of the migration holds any control character a field could be refused for: one JSON
    dump searched in C, where walking every string of 10,000 items' operations took ~0.3 s (`migrate apply`'s
    benchmark). A superset test (keys and every field count, a line break too), so False only sends the caller
    to the exact walk."""
    try:
        dumped = orjson.dumps([author, description, operations])
    except TypeError:  # a value JSON cannot hold: let the walk judge it
        return False
    return (_ESCAPED_CONTROL.search(dumped) is None
            and not any(_CONTROL_BUT_LINES.search(body) for body in bodies.values()))


def refuse_controls(migration: Migration) -> None:
    """Refuse the first control character a field of `migration` (or a body) may not hold.

    Raises:
        MigrationInvalidError: naming the operation, the field and the character.
    """
    bodies = {name: text for name, (text, _) in migration.bodies.items()}
    fault = controls_fault(migration.author, None, migration.operations, bodies)
    if fault is not None:
        raise MigrationInvalidError(migration.file_name, *fault)


def _gated(migration: Migration, seen: set[str]) -> Iterator[tuple[int, str, str]]:
    """Everything `migration` would put in the state that is text and not in `seen` (its author, each operation's
    text fields, each revision's title and body), as (operation index, or -1 for the document; field, or
    TITLE/BODY; text), in document order; each text yielded is added to `seen`, so an owner repeated over 10,000
    items is yielded once and named by `_place` once."""
    if migration.author not in seen:
        seen.add(migration.author)
        yield -1, "author", migration.author
    found: list[tuple[str, str]] = []
    for index, operation in enumerate(migration.operations):
        if operation["op"] == "upsertRevision":
            metadata = operation["metadata"]
            found.append((_TITLE, metadata["title"]))
            found.append((_BODY, migration.bodies[operation["contentFile"]][0]))
            for key, value in metadata.items():
                if key != "title" and key not in NOT_TEXT:
                    _collect(value, key, found)
        else:
            _collect(operation, "", found)
        for key, text in found:
            if text not in seen:
                seen.add(text)
                yield index, key, text
        found.clear()


def _place(migration: Migration, index: int, key: str) -> str:
    file = f"{MIGRATIONS_DIR}/{migration.file_name}"
    if index < 0:
        return f"{file} ({key})"
    if key in (_TITLE, _BODY):
        content_file = migration.operations[index]["contentFile"]
        body_file = f"{KNOWLEDGE_DIR}/{content_file.removeprefix(CONTENT_PREFIX)}"
        return f"{body_file} (title)" if key == _TITLE else body_file
    return f"{file} (operation {index}, {key})"


def gate_migrations(root: Path, migrations: Iterable[Migration], *, make_salt: bool) -> None:
    """Refuse a migration holding a control character it may not, or a secret (unless acknowledged), before any
    of them applies. `make_salt=False` (`migrate validate`) never writes the project's salt.

    Raises:
        MigrationInvalidError: a control character.
        SecretInTextError: a secret, in the words every knowledge gate uses.
        ConfigError: the project's `[review]` policy cannot be read.
    """
    listed = list(migrations)
    for migration in listed:
        refuse_controls(migration)
    seen: set[str] = set()  # an owner or a namespace repeated over thousands of items is scanned once
    texts = [(_place(migration, index, key), text) for migration in listed
             for index, key, text in _gated(migration, seen)]
    refuse_secrets(root, texts, nothing_done=MIGRATION_NOTHING_DONE, make_salt=make_salt)
