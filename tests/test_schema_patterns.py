"""Every copy of an identifier pattern is its owner's: the JSON schemas under `schemas/` (which cannot import a
constant) and every module-level regex of the six packages spell a ULID, a SHA-256 digest, a repository folder,
a record key, a record path, a repository and an item id only as the owner's pattern does. A copy that drifts
(a character class, a length, a kind of record) is named with where it stands."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import schemas
from evidence.records import RECORD_KEY_PATTERN, REPOSITORY_FOLDER_PATTERN, REPOSITORY_PATTERN
from knowledge.candidate import ITEM_ID
from projection.review_threads import RECORD_PATH
from theurian.id_patterns import SHA256_DIGEST_PATTERN, SHA256_HEX_PATTERN, ULID_PATTERN

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = Path(schemas.__file__).parent
PACKAGES = ("theurian", "ingest", "evidence", "projection", "knowledge", "serve")


def plain(pattern: str) -> str:
    """`pattern` with its named groups as a schema spells them: a group with no alternation unwrapped, any other
    group left unnamed (the language is the same)."""
    return re.sub(r"\(\?P<\w+>", "(", re.sub(r"\(\?P<\w+>([^()|]*)\)", r"\1", pattern))


# Each owner's text and its name, longest first: a record path holds a repository folder and a record key, a
# repository folder and a digest each hold the hex.
OWNERS = (
    (plain(RECORD_PATH.pattern), "record path"),
    (REPOSITORY_PATTERN.pattern, "repository"),
    (RECORD_KEY_PATTERN.pattern, "record key"),
    (ITEM_ID.pattern, "item id"),
    (SHA256_DIGEST_PATTERN.pattern, "sha256 digest"),
    (REPOSITORY_FOLDER_PATTERN.pattern, "repository folder"),
    (ULID_PATTERN.pattern, "ULID"),
    (SHA256_HEX_PATTERN.pattern, "sha256 hex"),
)
# What is left of a copy, drifted, once every owner's text is taken out: a Crockford class or a ULID's length, a
# `sha256` prefix or a lower-case class of about 64, a record key's `=`, a mixed-case class of a ranged length (a
# name's; a token's fixed length is another fact).
DRIFTED = re.compile(
    r"HJKMNP|\{2[5-7]\}|sha256[:-]|\[[^\]A-Z]*\]\{6[3-5]\}|_=-|\[A-Za-z0-9[^\]]*\]\{[01],\d+\}"
)
# The run manifest's record path names any kind and any file name under a repository folder: a looser shape of its
# own, not a copy of the served record path.
LOOSER_RECORD_PATHS = {("evidence/run-manifest.schema.json", "/properties/records/items/properties/recordPath")}


def left_over(pattern: str) -> str:
    """`pattern` with every owner's text replaced by the owner's name in angle brackets."""
    residue = plain(pattern)
    for text, name in OWNERS:
        residue = residue.replace(text, f"<{name}>")
    return residue


def _patterns(node: object, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield pointer, value
            else:
                yield from _patterns(value, f"{pointer}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _patterns(value, f"{pointer}/{index}")


def schema_patterns() -> list[tuple[str, str, str]]:
    """(schema file under schemas/, JSON pointer, pattern) of every `pattern` keyword in every schema."""
    found = []
    for path in sorted(SCHEMAS.rglob("*.schema.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        found += [(path.relative_to(SCHEMAS).as_posix(), pointer, pattern)
                  for pointer, pattern in _patterns(document, "")]
    return found


def code_patterns() -> list[tuple[str, str]]:
    """(module.name, pattern) of every compiled regex at module level in the six packages."""
    found = []
    for package in PACKAGES:
        for info in pkgutil.walk_packages([str(REPO / package)], prefix=f"{package}."):
            if info.name.endswith("__main__"):
                continue
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                if isinstance(value, re.Pattern):
                    pattern = value.pattern
                    text = pattern.decode("ascii") if isinstance(pattern, bytes) else pattern
                    found.append((f"{info.name}.{name}", text))
    return found


def test_the_schemas_spell_every_owned_identifier_as_its_owner_does() -> None:
    drifted = [(name, pointer, pattern, left_over(pattern)) for name, pointer, pattern in schema_patterns()
               if DRIFTED.search(left_over(pattern))]
    assert drifted == []


def test_the_codes_regexes_spell_every_owned_identifier_as_its_owner_does() -> None:
    drifted = [(name, pattern, left_over(pattern)) for name, pattern in code_patterns()
               if DRIFTED.search(left_over(pattern))]
    assert drifted == []


def misspelled_record_paths(entries: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The entries whose pattern is a path under a repository folder but neither the served record path nor one
    of LOOSER_RECORD_PATHS."""
    under_folder = f"^{REPOSITORY_FOLDER_PATTERN.pattern}/"
    served = f"^{plain(RECORD_PATH.pattern)}$"
    return [(name, pointer, pattern) for name, pointer, pattern in entries
            if plain(pattern).startswith(under_folder) and plain(pattern) != served
            and (name, pointer) not in LOOSER_RECORD_PATHS]


def test_every_schema_record_path_under_a_repository_folder_is_the_served_record_path() -> None:
    found = schema_patterns()
    assert misspelled_record_paths(found) == []
    served = [entry for entry in found if entry[2] == f"^{plain(RECORD_PATH.pattern)}$"]
    assert served  # the served record path's copies were found and compared, not none
    assert LOOSER_RECORD_PATHS <= {(name, pointer) for name, pointer, _ in found}


def test_the_schemas_hold_copies_of_each_owner_the_check_relies_on() -> None:
    spelled = " ".join(left_over(pattern) for _, _, pattern in schema_patterns())
    for _, name in OWNERS:
        assert f"<{name}>" in spelled, name


@pytest.mark.parametrize(
    "copy",
    [
        "^[0-9A-Z]{26}$",  # a ULID's alphabet widened
        "^[0-9A-HJKMNP-TV-Z]{25}$",  # a ULID a character short
        "^sha256:[0-9a-f]{63}$",  # a digest a character short
        "^sha256:[0-9a-fA-F]{64}$",  # a digest in either case
        "^[0-9a-f]{65}$",  # a bare digest a character long
        "^sha256-[0-9a-f]{6}$",  # a repository folder cut short
        "^[A-Za-z0-9_][A-Za-z0-9_=-]{0,198}$",  # a record key a character shorter
        "^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$",  # an item id of half the length
        "^[A-Za-z0-9][A-Za-z0-9-]{0,39}/(?!\\.\\.?$)[A-Za-z0-9._-]{1,100}$",  # an owner a character longer
    ],
)
def test_a_drifted_copy_is_told_apart_from_its_owner(copy: str) -> None:
    assert DRIFTED.search(left_over(copy)) is not None


def test_a_record_path_with_a_kind_dropped_is_told_apart_from_the_served_one() -> None:
    dropped = ("mcp/x.schema.json", "/recordPath", f"^{plain(RECORD_PATH.pattern).replace('|review-submission', '')}$")
    assert misspelled_record_paths([dropped]) == [dropped]
