"""Validate records and run manifests against `schemas/evidence/` (compiled once, cached).

`jsonschema` (pure Python, ~130 ms to import and ~44 µs a manifest entry to check) is imported only to name what
the fast check (`evidence.fast_check`) rejects, so a build of a sound lake never loads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Final

import schemas
from evidence.errors import RecordInvalidError
from evidence.fast_check import record_check, schema_check
from evidence.records import KINDS, repository_folder

if TYPE_CHECKING:
    import jsonschema

EVIDENCE_FAMILY: Final = "evidence"
MANIFEST_SCHEMA: Final = "run-manifest.schema.json"


@cache
def _validator(schema_name: str) -> jsonschema.Draft202012Validator:
    import jsonschema  # only to name a fault: see the module docstring

    schema = schemas.load(EVIDENCE_FAMILY, schema_name)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def _check(schema_name: str, document: object, path: str) -> None:
    import jsonschema  # only to name a fault: see the module docstring

    try:
        error = jsonschema.exceptions.best_match(_validator(schema_name).iter_errors(document))
    except RecursionError:
        # orjson parses up to 1,024 levels; naming the failing place in a value that deep outruns Python's stack.
        raise RecordInvalidError(f"{path or 'record'}: nested too deeply to name where it fails", path=path) from None
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
        # The failing value is author-controlled text: name the place, never quote the value.
        raise RecordInvalidError(f"{path or 'record'}: {where} fails {error.validator}", path=path)


def validate_record(record: object, *, path: str = "") -> None:
    """Raise RecordInvalidError unless `record` is a valid evidence record of a known kind.

    Valid means the fast check (`evidence.fast_check`) accepts it; `jsonschema` runs only on a record it
    rejects, to name the failing place.
    """
    # `type(...) is dict` first: what the bulk path parses, at a fraction of an ABC isinstance test (~0.2 µs).
    kind = record.get("kind") if type(record) is dict or isinstance(record, Mapping) else None
    if kind not in KINDS:
        raise RecordInvalidError(f"{path or 'record'}: kind is not one of {', '.join(KINDS)}", path=path)
    if record_check(str(kind))(record):
        return
    _check(f"{kind}.schema.json", record, path)
    # jsonschema found nothing: the one known difference, a pattern's `$` before a final newline.
    raise RecordInvalidError(
        f"{path or 'record'}: a string fails its schema pattern (a trailing newline is not allowed)", path=path
    )


def validate_manifest(manifest: object, *, path: str = "", entries_checked: int = 0) -> None:
    """Raise RecordInvalidError unless `manifest` is a valid run manifest.

    `entries_checked`: how many leading `records` entries an earlier call already validated on this same,
    growing manifest. A run rewrites its manifest after every page; checking only the new entries keeps a run
    linear in its size (the schema constrains each entry on its own, so nothing is skipped).
    """
    if not isinstance(manifest, Mapping):
        raise RecordInvalidError(f"{path or 'manifest'}: not a JSON object", path=path)
    records = manifest.get("records")
    if entries_checked and isinstance(records, list):
        manifest = {**manifest, "records": records[entries_checked:]}
    # The fast check accepts only what jsonschema accepts (`evidence.fast_check`): it decides a manifest it passes,
    # and jsonschema the rest, so a manifest is refused exactly when jsonschema refuses it.
    if not schema_check(MANIFEST_SCHEMA)(manifest):
        _check(MANIFEST_SCHEMA, manifest, path)
    # What the schema cannot say: a run is of one repository, so its folder is that repository's and every record
    # it lists lies in it. A manifest that says otherwise would label another repository's folder in `review
    # status` and date another repository's records in the store.
    folder = manifest["repositoryFolder"]
    if repository_folder(manifest["repository"]) != folder:
        raise RecordInvalidError(f"{path or 'manifest'}: repositoryFolder is not its repository's folder", path=path)
    for index, entry in enumerate(manifest["records"], start=entries_checked):
        if not entry["recordPath"].startswith(f"{folder}/"):
            raise RecordInvalidError(
                f"{path or 'manifest'}: records/{index} lies outside the run's repository folder", path=path
            )
