"""`review scan`: the content policy applied to records already in the lake, and the counts `review status` shows.

A lake can hold records from before the scanner, from a clone made under another policy, or from before
`redact_participants` was switched on. The scan screens every valid record file (`evidence.redaction.screen`)
and rewrites, in place, each one whose canonical bytes change — one durable replace per file, so a scan killed
at any instant leaves every file whole (old or new), and a re-run finds the rewritten ones unchanged and goes on.
Under `block` a record holding a secret is removed from the lake (named in the report); under `warn` and `off`
nothing of its text is changed. A real scan gives each rewritten record's entry in the newest run manifest listing
it the hash of its new bytes (so `evidence.lake_damage` does not call a policy applied an edit), then records the
salt's fingerprint in every run manifest that has none (`evidence.salt_key`). It holds the lake like an ingest
does, so the two never interleave.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson

from evidence.content_policy import SECRETS_BLOCK, ContentPolicy
from evidence.errors import NotRegularFile
from evidence.lake import Lake
from evidence.lake_listing import kind_entries
from evidence.lake_read import iter_records, key_of, read_entry_bytes
from evidence.records import KINDS, canonical_bytes, content_hash
from evidence.redaction import REDACTIONS_FIELD, screen
from evidence.salt_key import SALT_FINGERPRINT_FIELD, salt_fingerprint
from evidence.scan_journal import ScanJournal
from evidence.validation import validate_record
from theurian.containment import resolve_inside
from theurian.durable import fsync_directory, write_bytes_durably
from theurian.errors import TheurianError
from theurian.hidden_characters import CLASSES, classes_in
from theurian.project import REVIEW_DIR

ACTION_REWRITTEN: Final = "rewritten"
ACTION_REMOVED: Final = "removed"


@dataclass
class ScanReport:
    """What a scan found and did (or, dry, would do): record paths relative to `.theurian/review/`."""

    policy: str
    dry_run: bool
    scanned: int = 0
    rewritten: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    findings: Counter[str] = field(default_factory=Counter)
    records: list[dict[str, Any]] = field(default_factory=list)
    manifests_stamped: int = 0  # run manifests given the salt's fingerprint (`evidence.salt_key`)

    def as_json(self) -> dict[str, Any]:
        return {"policy": self.policy, "dryRun": self.dry_run, "scanned": self.scanned,
                "rewritten": self.rewritten, "removed": self.removed, "skipped": self.skipped,
                "findings": dict(sorted(self.findings.items())), "records": self.records,
                "manifestsStamped": self.manifests_stamped}


def scan_lake(project_root: Path, policy: ContentPolicy, *, dry_run: bool) -> ScanReport:
    """Screen every record in the lake under `policy`; rewrite (or remove) what changes unless `dry_run`.

    Raises:
        LakeBusyError: an ingest (or another scan) holds the lake.
    """
    lake = Lake(project_root)
    report = ScanReport(policy.secrets, dry_run)
    review = resolve_inside(project_root, REVIEW_DIR)
    if not review.is_dir():
        return report
    with lake.writing():
        _sweep(review)
        journal = None if dry_run else ScanJournal(project_root)
        # record path -> the sha256 of the bytes the scan rewrote it to; first those an interrupted scan rewrote
        hashes = {} if journal is None else journal.still_written(review)
        try:
            for entry in iter_records(project_root):
                if entry.record is None:
                    report.skipped.append(entry.record_path)
                    continue
                report.scanned += 1
                _scan_one(review, entry.record_path, entry.record, policy, report, hashes, journal)
        finally:
            if journal is not None:
                journal.close()  # kept on a stop: the next scan takes its entries over
        if not dry_run and hashes:
            _record_rewrites(lake, hashes)
        if not dry_run and policy.salt:
            report.manifests_stamped = _stamp_manifests(lake, salt_fingerprint(policy.salt))
        if journal is not None:
            journal.remove()  # every hash it held is in the manifests now
    return report


def _record_rewrites(lake: Lake, hashes: dict[str, str]) -> None:
    """Give each rewritten record's entry in the newest manifest listing it the hash of its new bytes: that entry
    is what says a file is as its lake wrote it (`evidence.lake_damage`), and a policy applied is no damage."""
    manifests = lake.manifests()
    newest = {listed["recordPath"]: index for index, manifest in enumerate(manifests)
              for listed in manifest["records"] if listed["recordPath"] in hashes}
    for index in sorted(set(newest.values())):
        manifest = manifests[index]
        records = [{**listed, "sha256": hashes[path]} if newest.get(path := listed["recordPath"]) == index
                   else listed for listed in manifest["records"]]
        lake.write_manifest({**manifest, "records": records})


def _stamp_manifests(lake: Lake, fingerprint: str) -> int:
    """Record the salt in every manifest that records none (one from before fingerprints were recorded): every
    record they list is now screened under it, so a later loss of the salt is refused, not silently remade. A
    manifest that records one already keeps it (the scan was refused unless the newest names this salt)."""
    stamped = 0
    for manifest in lake.manifests():
        if SALT_FINGERPRINT_FIELD not in manifest:
            lake.write_manifest({**manifest, SALT_FINGERPRINT_FIELD: fingerprint})
            stamped += 1
    return stamped


def _scan_one(review: Path, relative: str, record: dict[str, Any], policy: ContentPolicy,
              report: ScanReport, hashes: dict[str, str], journal: ScanJournal | None) -> None:
    screened = screen(record, policy)
    blocked = bool(screened.findings) and policy.secrets == SECRETS_BLOCK
    if screened.findings:
        report.findings.update(f.kind for f in screened.findings)
        report.records.append({"recordPath": relative, "kind": record["kind"], "recordKey": record["recordKey"],
                               "fields": [f.entry() for f in screened.findings]})
    path = review / relative
    if blocked:
        report.removed.append(relative)
        if not report.dry_run:
            os.unlink(path)
            fsync_directory(path.parent)
        return
    data = canonical_bytes(screened.record)
    if data != canonical_bytes(record):
        validate_record(screened.record, path=relative)  # as the ingest's would be, before it replaces the file
        report.rewritten.append(relative)
        if journal is not None:
            digest = content_hash(data)
            journal.note(relative, digest)  # before the file: a stop between the two leaves an entry unused
            write_bytes_durably(path, data)
            hashes[relative] = digest


def _sweep(review: Path) -> None:
    """Temp files a killed scan (or ingest) left beside the records it was replacing."""
    for folder in review.iterdir():
        for kind in KINDS:
            kind_dir = folder / kind
            if not kind_dir.is_dir() or kind_dir.is_symlink():
                continue
            for entry in kind_dir.iterdir():
                if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                    entry.unlink(missing_ok=True)


@dataclass
class ContentCounts:
    """Per repository folder: redactions the records list, records with any, and records per hidden class."""

    redactions: int = 0
    records_with_redactions: int = 0
    hidden: Counter[str] = field(default_factory=Counter)

    def as_json(self) -> dict[str, Any]:
        return {"redactions": self.redactions, "recordsWithRedactions": self.records_with_redactions,
                "hiddenCharacters": {name: self.hidden[name] for name in CLASSES}}


def content_counts(project_root: Path, folder: str) -> ContentCounts:
    """Count a repository folder's redactions and hidden characters, reading each record file (parsed, not
    validated: a file that does not parse counts nothing; `review build` names it)."""
    counts = ContentCounts()
    review = resolve_inside(project_root, REVIEW_DIR)
    for kind in KINDS:
        try:
            entries = kind_entries(review, folder, kind)
        except (TheurianError, OSError):
            continue
        for entry in entries:
            if key_of(entry.name) is None:
                continue
            try:
                record = orjson.loads(read_entry_bytes(review, entry))
            except (NotRegularFile, OSError, orjson.JSONDecodeError):
                continue
            if not isinstance(record, dict):
                continue
            listed = record.get(REDACTIONS_FIELD)
            if isinstance(listed, list) and listed:
                counts.redactions += len(listed)
                counts.records_with_redactions += 1
            counts.hidden.update(classes_in(_texts(record)))
    return counts


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _texts(item)]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    return []
