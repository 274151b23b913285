"""The edge where the ingest hands records to the lake: every record screened before it is written.

The fetch and the mapping never see the policy; the run hands each mapped record to `ContentGate.put`, which
screens it (`evidence.redaction.screen`), writes what the policy keeps, and remembers, for the run's manifest
and summary, which records held secrets and what was done — types and fingerprints, never values.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from evidence.batch import RecordBatch
from evidence.content_policy import SECRETS_BLOCK, ContentPolicy
from evidence.lake import Lake, PutResult
from evidence.redaction import SECRET_ACTIONS as ACTIONS
from evidence.redaction import screen


class ContentGate:
    """Screens records for one run under one policy and keeps the run's account of what it found."""

    def __init__(self, policy: ContentPolicy) -> None:
        self.policy = policy
        self.findings: Counter[str] = Counter()
        self.records: list[dict[str, Any]] = []

    def put(self, batch: RecordBatch, record: Mapping[str, Any]) -> PutResult | None:
        """Stage the record as the policy keeps it; None when the policy blocks it (nothing is staged).

        Raises:
            RecordInvalidError: the screened record does not validate (nothing is staged).
        """
        screened = screen(record, self.policy)
        if screened.findings:
            action = ACTIONS[self.policy.secrets]
            self.findings.update(finding.kind for finding in screened.findings)
            self.records.append({
                "kind": record["kind"], "recordKey": record["recordKey"],
                "recordPath": Lake.record_path(record["repository"], record["kind"], record["recordKey"]),
                "action": action, "fields": [finding.entry() for finding in screened.findings],
            })
            if action == ACTIONS[SECRETS_BLOCK]:
                return None
        return batch.put(screened.record)

    def blocked_since(self, start: int) -> list[dict[str, Any]]:
        """The entries of records the policy blocked, of those noted from index `start` of `records` on."""
        return [entry for entry in self.records[start:] if entry["action"] == ACTIONS[SECRETS_BLOCK]]

    def report(self) -> dict[str, Any]:
        """The manifest's `secrets` value: the policy, findings by type, and each record named."""
        return {"policy": self.policy.secrets, "findings": dict(sorted(self.findings.items())),
                "records": list(self.records)}
