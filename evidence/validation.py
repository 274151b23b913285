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
from evidence.fast_check import Check, record_check, schema_check
from evidence.records import KINDS, repository_folder
from theurian.schema_faults import fault

if TYPE_CHECKING:
    import jsonschema

EVIDENCE_FAMILY: Final = "evidence"
MANIFEST_SCHEMA: Final = "run-manifest.schema.json"


@cache
def _validator(schema_name: str) -> jsonschema.Draft202012Validator:
    import jsonschema  # only to name a fault: see the module docstring

    schema = schemas.load(EVIDENCE_FAMILY, schema_name)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def _check(schema_name: str, check: Check, document: object, path: str, *, whole: str,
           stricter_decides: bool) -> None:
    # `sent=False`: a record or a manifest was read from the lake, not sent; its reader says which file.
    problem = fault(check, lambda: _validator(schema_name), document, whole, sent=False,
                    stricter_decides=stricter_decides)
    if problem is not None:
        # The failing value is author-controlled text: the place and the constraint are named, never the value.
        raise RecordInvalidError(f"{path or whole.removeprefix('the ')}: {problem}", path=path)


def validate_record(record: object, *, path: str = "") -> None:
    """Raise RecordInvalidError unless `record` is a valid evidence record of a known kind.

    Valid means the fast check (`evidence.fast_check`) accepts it; `jsonschema` runs only on a record it
    rejects, to name the failing place.
    """
    # `type(...) is dict` first: what the bulk path parses, at a fraction of an ABC isinstance test (~0.2 µs).
    kind = record.get("kind") if type(record) is dict or isinstance(record, Mapping) else None
    if kind not in KINDS:
        raise RecordInvalidError(f"{path or 'record'}: kind is not one of {', '.join(KINDS)}", path=path)
    check = record_check(str(kind))
    if not check(record):  # the bulk path's cost is this one call: nothing more runs for a valid record
        _check(f"{kind}.schema.json", check, record, path, whole="the record", stricter_decides=True)


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
    _check(MANIFEST_SCHEMA, schema_check(MANIFEST_SCHEMA), manifest, path, whole="the manifest", stricter_decides=False)
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
