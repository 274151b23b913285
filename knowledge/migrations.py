"""Migration files: finding them, reading them (YAML, safe_load only) and validating them before anything
applies.

A migration is `.theurian/migrations/<id>-<slug>.yaml`. Validation is whole-file and happens for every file
before the first operation runs: the document against `schemas/knowledge/migration.schema.json` (each
operation against its own definition, so a problem is reported with its index), the semantic rules a schema
cannot say (timestamps, anchors, the file name), and every body's `sha256:` hash.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any, Final

import jsonschema

import schemas
from evidence.errors import NotRegularFile
from evidence.files import read_opened
from knowledge.errors import MigrationInvalidError, SourceUnreadable
from knowledge.migration_yaml import read_yaml
from knowledge.vocabulary import parse_rfc3339
from theurian.containment import resolve_inside
from theurian.errors import PathEscapeError
from theurian.project import KNOWLEDGE_DIR, MIGRATIONS_DIR
from theurian.schema_faults import Check, fast_check, fault

FILE_NAME: Final = re.compile(r"^(?P<id>[0-9A-HJKMNP-TV-Z]{26})-(?P<slug>[a-z0-9][a-z0-9-]{0,80})\.yaml$")
CONTENT_PREFIX: Final = "../knowledge/"
MAX_BODY_BYTES: Final = 1_000_000
# A migration is YAML naming its bodies, never holding them: a few kilobytes, a bulk import of thousands of items a
# few megabytes. The bound keeps a planted or runaway file from being read whole before it is refused.
MAX_MIGRATION_BYTES: Final = 64 * 1024 * 1024


def read_source(path: str | Path, max_bytes: int) -> bytes:
    """A knowledge source file (a migration, a body, a proposal's file) at the resolved `path`: a regular file of at
    most `max_bytes`, opened without waiting (a FIFO would hang `migrate apply` and `propose`), never read whole
    past the bound.

    Raises:
        FileNotFoundError: nothing is there.
        SourceUnreadable: not a regular file, too large, or the file system refused it.
    """
    try:
        return read_opened(path, max_bytes)
    except FileNotFoundError:
        raise
    except NotRegularFile as exc:
        if not exc.too_large:
            raise SourceUnreadable("not a regular file") from exc
        raise SourceUnreadable(f"larger than {max_bytes} bytes", too_large=True) from exc
    except OSError as exc:
        raise SourceUnreadable(f"unreadable ({exc.strerror or type(exc).__name__})") from exc


@dataclass(frozen=True)
class Migration:
    file_name: str
    migration_id: str
    checksum: str  # sha256 of the file's bytes: an applied migration must keep it
    created_at: str
    author: str
    depends_on: tuple[str, ...]
    operations: tuple[dict[str, Any], ...]
    bodies: dict[str, tuple[str, str]]  # contentFile -> (text, "sha256:<hex>")


def sha256_checksum(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def migration_files(root: Path) -> list[str]:
    """The file names under .theurian/migrations that look like migrations, in apply order (ULID order).

    Raises:
        MigrationInvalidError: a .yaml/.yml file there is not named `<ULID>-<slug>.yaml`.
    """
    folder = resolve_inside(root, MIGRATIONS_DIR)
    if not folder.is_dir():
        return []
    names = sorted(entry.name for entry in folder.iterdir() if entry.suffix in (".yaml", ".yml"))
    for name in names:
        if not FILE_NAME.match(name):
            raise MigrationInvalidError(
                name, None, "the file name is not <ULID>-<slug>.yaml (slug: a-z, 0-9, -)"
            )
    return names


def load_migration(root: Path, file_name: str) -> Migration:
    """Read and validate one migration, bodies included.

    Raises:
        MigrationInvalidError: naming the file, the operation index (when one is at fault) and the problem.
    """
    return read_migration(resolve_inside(root, f"{MIGRATIONS_DIR}/{file_name}"), file_name,
                          resolve_inside(root, KNOWLEDGE_DIR))


def read_migration(path: Path, file_name: str, knowledge: Path) -> Migration:
    """Read and validate the migration at `path`, named `file_name`, its bodies read from under the folder
    `knowledge` (the project's own, or a proposal's before it is accepted).

    Raises:
        MigrationInvalidError: as `load_migration`.
    """
    try:
        data = read_source(path, MAX_MIGRATION_BYTES)
    except SourceUnreadable as exc:
        raise MigrationInvalidError(file_name, None, f"the file is {exc.reason}") from exc
    document = read_yaml(file_name, data)
    validate_document(file_name, document)
    match = FILE_NAME.match(file_name)
    assert match is not None  # migration_files only hands over matching names
    if match.group("id") != document["id"]:
        raise MigrationInvalidError(
            file_name,
            None,
            f"the file name starts with {match.group('id')} but the document's id is {document['id']}",
        )
    paths = _BodyPaths(knowledge)
    bodies = {
        op["contentFile"]: _body(paths, file_name, index, op)
        for index, op in enumerate(document["operations"])
        if op["op"] == "upsertRevision"
    }
    return Migration(
        file_name=file_name,
        migration_id=document["id"],
        checksum=sha256_checksum(data),
        created_at=document["createdAt"],
        author=document["author"],
        depends_on=tuple(document["dependsOn"]),
        operations=tuple(document["operations"]),
        bodies=bodies,
    )


def validate_document(file_name: str, document: Any) -> None:
    """Schema and semantic checks of a parsed migration (no file access).

    Raises:
        MigrationInvalidError: the first problem found, with its operation index when an operation holds it.
    """
    if not isinstance(document, dict):
        raise MigrationInvalidError(file_name, None, "the document is not a mapping")
    _check("document", document, file_name, None)
    for index, operation in enumerate(document["operations"]):
        kind = operation.get("op") if isinstance(operation, dict) else None
        if kind not in _operation_kinds():
            raise MigrationInvalidError(
                file_name, index, f"`op` must be one of {', '.join(_operation_kinds())}"
            )
        _check(kind, operation, file_name, index)
        _check_semantics(operation, file_name, index)
    try:
        parse_rfc3339(document["createdAt"])
    except ValueError as exc:
        raise MigrationInvalidError(file_name, None, f"`createdAt` is {exc}") from exc


def _check_semantics(operation: dict[str, Any], file_name: str, index: int) -> None:
    anchors = [operation["anchor"]] if operation["op"] == "addEvidence" else []
    if operation["op"] == "upsertRevision":
        metadata = operation["metadata"]
        anchors = metadata["sourceAnchors"]
        origin = metadata.get("originatesInTheurian", False)
        if not anchors and not origin:
            raise MigrationInvalidError(
                file_name,
                index,
                "`metadata.sourceAnchors` is empty: an item needs a "
                "route to its origin unless it declares originatesInTheurian: true",
            )
        if anchors and origin:
            raise MigrationInvalidError(
                file_name,
                index,
                "`metadata.originatesInTheurian` is true but "
                "`metadata.sourceAnchors` names an outside origin",
            )
        moments = {}
        for key in ("validFrom", "validTo"):
            if key in metadata:
                try:
                    moments[key] = parse_rfc3339(metadata[key])
                except ValueError as exc:
                    raise MigrationInvalidError(file_name, index, f"`metadata.{key}` is {exc}") from exc
        if len(moments) == 2 and moments["validTo"] <= moments["validFrom"]:
            raise MigrationInvalidError(
                file_name, index, "`metadata.validTo` is not after `metadata.validFrom`"
            )
    for anchor in anchors:
        if anchor.get("lineEnd", anchor.get("lineStart", 1)) < anchor.get("lineStart", 1):
            raise MigrationInvalidError(file_name, index, "a source anchor's lineEnd is before its lineStart")


class _BodyPaths:
    """`resolve_inside(knowledge, relative)` for the many bodies of one migration, each folder resolved once:
    resolving every body's whole path costs an lstat per part, and bodies share their folders. A leaf that is a
    link is resolved in full, so whatever it points at is checked as before."""

    def __init__(self, knowledge: Path) -> None:
        self._knowledge = knowledge
        self._folders: dict[str, Path] = {}

    def resolve(self, relative: str) -> str | Path:
        """Raises: PathEscapeError, as `resolve_inside`."""
        parent, _, name = relative.rpartition("/")
        if relative.startswith("/") or any(part in ("", ".", "..") for part in relative.split("/")):
            # Not plain `folder/.../name` text: pathlib's reading of it decides, as for every body before.
            pure = PurePosixPath(relative)
            if pure.is_absolute() or ".." in pure.parts or not pure.parts:
                return resolve_inside(self._knowledge, relative)
            parent, name = str(pure.parent), pure.name
        # Plain strings and os.path here: pathlib's objects cost more than the read of a small body.
        folder = self._folders.get(parent)
        if folder is None:
            folder = self._folders[parent] = resolve_inside(self._knowledge, PurePosixPath(parent))
        leaf = os.path.join(folder, name)
        return resolve_inside(self._knowledge, relative) if os.path.islink(leaf) else leaf


def _body(paths: _BodyPaths, file_name: str, index: int, operation: dict[str, Any]) -> tuple[str, str]:
    relative = operation["contentFile"].removeprefix(CONTENT_PREFIX)
    try:
        # Contained by the knowledge folder itself, not the project: a symlink under it to anywhere else in
        # the project (a secret, a source tree) would otherwise become a body and be served as knowledge.
        path = paths.resolve(relative)
    except PathEscapeError as exc:
        raise MigrationInvalidError(
            file_name, index, "`contentFile` does not stay under .theurian/knowledge/"
        ) from exc
    try:
        data = read_source(path, MAX_BODY_BYTES)
    except FileNotFoundError as exc:
        raise MigrationInvalidError(
            file_name, index, f"`contentFile` {operation['contentFile']} does not exist"
        ) from exc
    except SourceUnreadable as exc:
        raise MigrationInvalidError(file_name, index, f"the body {operation['contentFile']} is {exc.reason}") from exc
    actual = sha256_checksum(data)
    if actual != operation["contentSha256"]:
        raise MigrationInvalidError(
            file_name,
            index,
            f"the body {operation['contentFile']} hashes to {actual}, "
            f"not the contentSha256 the migration records",
        )
    try:
        return data.decode("utf-8"), actual
    except UnicodeDecodeError as exc:
        raise MigrationInvalidError(file_name, index, "the body is not UTF-8 text") from exc


def _check(definition: str, instance: Any, file_name: str, index: int | None) -> None:
    """Valid when the compiled check (jsonschema-rs, as the review build uses) accepts it; only a rejected
    instance is walked by `jsonschema`, which names the failing place. On the one way the two disagree (a
    pattern's `$` before a final newline) the stricter reading decides."""
    whole = "the document" if index is None else "the operation"
    problem = fault(_fast_check(definition), lambda: _validator(definition), instance, whole, sent=True)
    if problem is not None:
        raise MigrationInvalidError(file_name, index, problem)


@cache
def _operation_kinds() -> tuple[str, ...]:
    return tuple(
        schemas.load("knowledge", "migration.schema.json")["$defs"]["operation"]["properties"]["op"]["enum"]
    )


@cache
def _schema(definition: str) -> dict[str, Any]:
    document = schemas.load("knowledge", "migration.schema.json")
    if definition == "document":
        # The top level alone: each operation is checked on its own below, so its problem carries its index.
        properties = {**document["properties"], "operations": {"type": "array", "minItems": 1}}
        return {**document, "properties": properties}
    # One operation's definition with its references inlined: resolving $ref per operation dominated the
    # cost of validating a large migration.
    inlined: dict[str, Any] = _inline(document["$defs"][definition], document["$defs"])
    return inlined


@cache
def _validator(definition: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(_schema(definition))


@cache
def _fast_check(definition: str) -> Check:
    return fast_check(_schema(definition))


def _inline(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/$defs/"):
            return _inline(definitions[reference.removeprefix("#/$defs/")], definitions)
        return {key: _inline(value, definitions) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(value, definitions) for value in node]
    return node
