"""The index pointer, `.theurian/state/knowledge-index.json`: the one file that names the published index — its
build id, the state hash it was built from, the disclosure ceiling it was built under, its file, the channels it
offers and the digests and model they were made with (`knowledge.index` builds and publishes it, and checks every
fact it states against the index's stamped `meta` before a search trusts it).

A pointer no build wrote (unreadable, not JSON, a field missing or mistyped, an index file name no build makes)
reads as no pointer at all; one of a superseded index schema is told apart (`load_index_pointer`), so a caller
can say the index needs rebuilding rather than that there is none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from evidence.errors import NotRegularFile
from knowledge.fusion import WORD_CHANNELS
from knowledge.index_stamp import INDEX_SCHEMA_VERSION
from knowledge.state import read_small_file
from theurian.containment import resolve_inside
from theurian.durable import write_bytes_durably
from theurian.embedding import ModelIdentity
from theurian.id_patterns import ULID_PATTERN
from theurian.project import INDEX_FILE_PREFIX, STATE_DIR
from theurian.project import INDEX_POINTER_NAME as INDEX_POINTER_NAME

INDEX_FILE: Final = re.compile(rf"^{INDEX_FILE_PREFIX}{ULID_PATTERN.pattern}\.sqlite$")
# The first pointer version read at all: a version-1 pointer names no channels (the search falls back with
# `no-index`); a later one below INDEX_SCHEMA_VERSION (knowledge/index_stamp.py) is a superseded index.
FIRST_READ_SCHEMA_VERSION: Final = 2


@dataclass(frozen=True)
class IndexPointer:
    build_id: str
    state_hash: str
    disclosure_ceiling: str
    index_file: str
    channels: tuple[str, ...] = field(default=WORD_CHANNELS)
    model: ModelIdentity | None = None  # the embedding model the dense vectors were made with
    dense_sha256: str | None = None  # knowledge/dense.py's digest of those vectors
    raptor_sha256: str | None = None  # knowledge/raptor.py's digest of the summary tree (--raptor only)
    postings_sha256: str = ""  # knowledge/postings.py's digest of the word postings
    schema_version: int = INDEX_SCHEMA_VERSION  # the pointer's; below INDEX_SCHEMA_VERSION only from load_index_pointer


def publish_index_pointer(folder: Path, published: IndexPointer) -> None:
    """Write `published` as the state folder's index pointer, durably (it replaces the pointer there whole)."""
    write_bytes_durably(folder / INDEX_POINTER_NAME, orjson.dumps(_document(published), option=orjson.OPT_INDENT_2))


def _document(published: IndexPointer) -> dict[str, Any]:
    model = published.model
    return {
        "buildId": published.build_id,
        "stateHash": published.state_hash,
        "disclosureCeiling": published.disclosure_ceiling,
        "indexFile": published.index_file,
        "schemaVersion": INDEX_SCHEMA_VERSION,
        "channels": list(published.channels),
        "embeddingModel": None
        if model is None
        else {
            "name": model.name,
            "dimension": model.dimension,
            "weightsSha256": model.weights_sha256,
        },
        "denseSha256": published.dense_sha256,
        "raptorSha256": published.raptor_sha256,
        "postingsSha256": published.postings_sha256,
    }


def read_index_pointer(root: Path) -> IndexPointer | None:
    """The published index, or None when none was built, the pointer is not one this build wrote, or it names a
    superseded index (`load_index_pointer` tells that one apart)."""
    pointer = load_index_pointer(root)
    return pointer if pointer is not None and pointer.schema_version == INDEX_SCHEMA_VERSION else None


def load_index_pointer(root: Path) -> IndexPointer | None:
    """The published pointer, of this index schema or a superseded one (`schema_version`), or None when none was
    built or it is not a pointer any build wrote."""
    try:
        document = orjson.loads(read_small_file(resolve_inside(root, f"{STATE_DIR}/{INDEX_POINTER_NAME}")))
        version = document["schemaVersion"]
        if type(version) is not int or not FIRST_READ_SCHEMA_VERSION <= version <= INDEX_SCHEMA_VERSION:
            return None
        pointer = IndexPointer(
            str(document["buildId"]),
            str(document["stateHash"]),
            str(document["disclosureCeiling"]),
            str(document["indexFile"]),
            tuple(str(channel) for channel in document["channels"]),
            _identity(document["embeddingModel"]),
            _optional(document["denseSha256"]),
            _optional(document["raptorSha256"]),
            str(document["postingsSha256"]),
            version,
        )
        if not INDEX_FILE.match(pointer.index_file):
            return None
    except FileNotFoundError:
        return None
    except (NotRegularFile, OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None
    return pointer


def _identity(value: Any) -> ModelIdentity | None:
    if value is None:
        return None
    return ModelIdentity(str(value["name"]), int(value["dimension"]), str(value["weightsSha256"]))


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)
