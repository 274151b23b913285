"""Valid run manifests made on the spot (the shape `ingest.run.RepositoryRun` writes), for tests of what reads them."""

from __future__ import annotations

from typing import Any

from evidence.records import KINDS, record_file_name, repository_folder
from evidence.salt_key import SALT_FINGERPRINT_FIELD
from ingest.withheld import MANIFEST_FIELD as WITHHELD_FIELD


def run_manifest(run_id: str, repository: str, *, entries: int = 0, status: str = "completed",
                 fingerprint: str | None = None, withheld: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A run of `repository` listing `entries` review threads; `fingerprint` and `withheld` only when given (a
    manifest from before either field existed has neither)."""
    folder = repository_folder(repository)
    zero = {"created": 0, "updated": 0, "unchanged": 0, "missingUpstream": 0}
    keys = [f"PRRT_{run_id}_{n}" for n in range(entries)]
    manifest: dict[str, Any] = {
        "formatVersion": 1, "kind": "run", "runId": run_id, "provider": "github", "repository": repository,
        "repositoryFolder": folder, "mode": "incremental", "rescanOpen": False,
        "window": {"since": None, "until": "2026-11-01T00:00:00+00:00"},
        "startedAt": "2026-11-01T00:00:00.000000+00:00",
        "finishedAt": None if status == "running" else "2026-11-01T01:00:00.000000+00:00",
        "status": status, "error": None, "counts": {kind: dict(zero) for kind in KINDS},
        "commentsMissingUpstream": 0, "pullRequests": 0, "requests": 0, "graphqlPoints": 0, "retries": 0,
        "records": [{"kind": "review-thread", "recordKey": key,
                     "recordPath": f"{folder}/review-thread/{record_file_name(key)}", "sha256": "sha256:" + "0" * 64}
                    for key in keys],
    }
    if fingerprint is not None:
        manifest[SALT_FINGERPRINT_FIELD] = fingerprint
    if withheld is not None:
        manifest[WITHHELD_FIELD] = withheld
    return manifest
