"""The concern clustering taken over from the store a build replaces, when everything it reads is unchanged.

`concern_clusters.cluster` is a pure function of its units' vectors (in their order) and the threshold: exact integer
arithmetic, no dependence on BLAS, the CPU count or timing (docs/review-concerns.md, "Determinism"). So its clusters,
kept as units' positions, are the clusters it would form again from the same input. A store keeps, in
`concern_input`, the digest of that input — the code of the clustering (the bytes of `concern_clusters` and
`concern_screen`, whose constants are its parameters), the threshold, and every unit's stored vector text in order
— and in `concern_clusters` every cluster of two units or more. A build whose input digests the same takes those
clusters over instead of clustering again; anything else (a unit added, dropped, reordered or re-embedded, another
threshold, other clustering code) clusters afresh. Everything after the clustering — which clusters are concerns,
their ids, figures, representatives and excerpts — is computed again either way, from this build's records.

The facts the concern stage reads beside the rows (`review_rows.RecordFacts`: when a record was written, whether a
pull request merged, its checks) are kept too, in `concern_facts`, by the content hash of the file they were read
from: the same bytes give the same facts, so an incremental build takes them over for the members it did not read,
instead of reading each member's file again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

import duckdb

from projection import concern_clusters, concern_screen
from projection.review_layout import CONCERN_CLUSTER_COLUMNS, CONCERN_FACT_COLUMNS, CONCERN_INPUT_COLUMNS
from projection.review_rows import RecordFacts
from projection.review_store import READ_FAULTS

_DOMAIN: Final = "theurian-concern-clustering-input/1"


@dataclass(frozen=True)
class StoredClustering:
    """A store's clustering: the digest of its input, how many units it clustered, its clusters (sorted positions,
    ordered by their first)."""

    input_digest: str
    units: int
    clusters: list[list[int]]

    def reusable_for(self, input_digest: str, units: int) -> bool:
        """Whether these clusters are what clustering an input of this digest and count would form."""
        return self.input_digest == input_digest and self.units == units


@cache
def _code_digest() -> str:
    """The clustering's code, read from its modules' files: any edit to it (or its constants) is another input.

    The files as they are when a build first asks, which is the code that build runs: only a build digests them,
    and a build is one short-lived process (the daemon never builds). How a stored vector text decodes
    (`review_vectors.decode_vectors`) is not covered: the stored encoding changing is a store schema change, and a
    store of another schema lends nothing."""
    digest = hashlib.sha256()
    for module in (concern_clusters, concern_screen):
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()


def input_digest(stored: Sequence[str], threshold: float) -> str:
    """The digest of a clustering's whole input: its code, `threshold`, and the units' stored vector texts in order
    (base64 of float16, as the `vectors` table holds them: the same text decodes to the same vector)."""
    digest = hashlib.sha256(f"{_DOMAIN}\n{_code_digest()}\n{threshold!r}\n{len(stored)}\n".encode())
    digest.update("\n".join(stored).encode("ascii"))
    return digest.hexdigest()


def stored_clustering(cursor: duckdb.DuckDBPyConnection, schema: str = "s.") -> StoredClustering | None:
    """The clustering kept by the (verified) store attached as `schema`; None when it cannot be read as one."""
    try:
        rows = cursor.execute(f"SELECT {', '.join(CONCERN_INPUT_COLUMNS)} FROM {schema}concern_input").fetchall()  # noqa: S608
        if len(rows) != 1:
            return None
        members = cursor.execute(
            f"SELECT {', '.join(CONCERN_CLUSTER_COLUMNS)} FROM {schema}concern_clusters ORDER BY cluster, unit"  # noqa: S608
        ).fetchall()
    except READ_FAULTS:
        return None
    (digest, units), = rows
    clusters: dict[int, list[int]] = {}
    for number, unit in members:
        clusters.setdefault(int(number), []).append(int(unit))
    found = list(clusters.values())
    # What `cluster` returns, or nothing: units in range, each cluster of two or more, no unit in two.
    every = [unit for group in found for unit in group]
    if any(len(group) < 2 for group in found) or len(set(every)) != len(every) or \
            any(not 0 <= unit < int(units) for unit in every) or found != sorted(found):
        return None
    return StoredClustering(str(digest), int(units), found)


def insert_clustering(connection: duckdb.DuckDBPyConnection, clustering: StoredClustering) -> None:
    """Fill `concern_input` and `concern_clusters` of the store being built."""
    connection.execute("INSERT INTO concern_input VALUES (?, ?)", [clustering.input_digest, clustering.units])
    numbers = [number for number, group in enumerate(clustering.clusters) for _ in group]
    units = [unit for group in clustering.clusters for unit in group]
    if units:
        connection.execute("INSERT INTO concern_clusters SELECT unnest(?::BIGINT[]), unnest(?::BIGINT[])",
                           [numbers, units])


def stored_facts(cursor: duckdb.DuckDBPyConnection, schema: str = "s.") -> dict[str, RecordFacts]:
    """content hash → the facts kept by the (verified) store attached as `schema`."""
    rows = cursor.execute(f"SELECT {', '.join(CONCERN_FACT_COLUMNS)} FROM {schema}concern_facts").fetchall()  # noqa: S608
    return {str(sha): RecordFacts(created, merged, checks) for sha, created, merged, checks in rows}


def insert_facts(connection: duckdb.DuckDBPyConnection, facts: dict[str, RecordFacts]) -> None:
    """Fill `concern_facts` of the store being built."""
    if facts:
        values = [list(facts), *(list(column) for column in zip(*facts.values(), strict=True))]
        connection.execute("INSERT INTO concern_facts SELECT unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
                           "unnest(?::BOOLEAN[]), unnest(?::VARCHAR[])", values)
