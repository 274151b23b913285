"""The fast accept/reject check for evidence records: `jsonschema-rs`, one validator per schema, built once.

`jsonschema` costs about five times an orjson parse per record (`design/DEPENDENCIES.md`: 210 µs against 43 µs);
`jsonschema-rs` checks the same record in 2–5 µs, so on a build over a whole lake validation stops being the
cost. It answers only "valid or not"; `evidence.validation` asks `jsonschema` to name the failing place of a
record it rejects (`theurian.schema_faults.fault`, the one wording of a schema fault).

The two differ in one known place: `jsonschema` tests a `pattern` with Python's `re.search`, where `$` also
matches before a final newline; `jsonschema-rs` reads patterns as JSON Schema says (ECMA-262), where it does not.
So a record key ending in a newline passes `jsonschema` and fails here. The stricter reading decides: a record
is valid only when this check accepts it (a hypothesis test pins that the two agree everywhere else).
"""

from __future__ import annotations

from functools import cache

import schemas
from theurian.schema_faults import Check, fast_check

__all__ = ["Check", "record_check", "schema_check"]


@cache
def record_check(kind: str) -> Check:
    """The check for records of `kind` (`<kind>.schema.json` in `schemas/evidence/`).

    The schema's own `$schema` picks the draft (2020-12, where `format` is an annotation, as `jsonschema`
    treats a format it has no checker for).
    """
    return schema_check(f"{kind}.schema.json")


@cache
def schema_check(schema_name: str) -> Check:
    """The check for documents of the evidence schema `schema_name` (`record_check`'s, for a run manifest too); a
    value it cannot read as JSON (an integer past 64 bits) fails it (`theurian.schema_faults.fast_check`)."""
    return fast_check(schemas.load("evidence", schema_name))
