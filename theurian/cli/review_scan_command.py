"""`theurian review scan [--dry-run]`: the project's content policy applied to the records its lake holds.

Also the lines the ingest's summary prints about secrets, so both commands word a finding the same way: a
record's kind, key and path, the fields and types, and a fingerprint — never a value.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

import typer

from evidence.content_policy import lake_holds_records, read_policy
from evidence.lake_scan import scan_lake
from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.pasteable import named_root, with_project
from theurian.cli.project_option import ProjectOption, project_root
from theurian.project import REVIEW_DIR

# A run that finds thousands prints the first ones; the manifest (or --json) lists every one.
MAX_LISTED_RECORDS: Final = 20


def _fields(fields: list[dict[str, str]]) -> str:
    return ", ".join(f"{f['field']}: {f['type']} {f['fingerprint']}" for f in fields)


def _listed(records: list[dict[str, Any]], verb: str, where: str) -> list[str]:
    lines = [f"  {record.get('action', verb)} {record['kind']} {record['recordKey']} "
             f"({REVIEW_DIR}/{record['recordPath']}): {_fields(record['fields'])}"
             for record in records[:MAX_LISTED_RECORDS]]
    if len(records) > MAX_LISTED_RECORDS:
        lines.append(f"  … and {len(records) - MAX_LISTED_RECORDS} more records, every one listed in {where}")
    return lines


def _by_type(findings: dict[str, int]) -> str:
    return ", ".join(f"{kind} {count}" for kind, count in findings.items())


def secret_lines(manifest: dict[str, Any]) -> list[str]:
    """The ingest summary's lines about the secrets a run found (none when it found none)."""
    secrets = manifest.get("secrets")
    if not secrets or not secrets["records"]:
        return []
    total = sum(secrets["findings"].values())
    head = (f"  secrets (policy {secrets['policy']}): {total} found ({_by_type(secrets['findings'])}) in "
            f"{len(secrets['records'])} records:")
    return [head, *_listed(secrets["records"], "found", f"{REVIEW_DIR}/runs/{manifest['runId']}.json")]


def scan(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would change; change nothing.")]
    = False,
    as_json: JsonSummaryOption = False,
    project: ProjectOption = None,
) -> None:
    """Apply \\[review] secrets and redact_participants to every record already in .theurian/review/.

    Rewrites in place each record the policy changes (one durable replace per file: safe to stop and run
    again); under "block" a record holding a secret is removed. Run `theurian review build` afterwards.
    """
    root = project_root(project)
    # A dry run writes nothing, not even the salt: over an empty lake it needs none, and over records whose salt
    # is gone `project_salt` refuses as a real run would.
    policy = read_policy(root, make_salt=not dry_run or lake_holds_records(root))
    report = scan_lake(root, policy, dry_run=dry_run)
    if as_json:
        echo_summary(report.as_json())
        return
    would = "would be " if dry_run else ""
    typer.echo(f"scanned {report.scanned} records under secrets = \"{report.policy}\": "
               f"{len(report.rewritten)} {would}rewritten, {len(report.removed)} {would}removed, "
               f"{len(report.skipped)} skipped as not valid records")
    if report.records:
        total = sum(report.findings.values())
        typer.echo(f"  secrets: {total} found ({_by_type(dict(sorted(report.findings.items())))}) in "
                   f"{len(report.records)} records:")
        verb = "found" if dry_run else {"redact": "redacted", "block": "removed"}.get(report.policy, "found")
        for line in _listed(report.records, verb, "the --json report"):
            typer.echo(line)
    for path in report.removed[:MAX_LISTED_RECORDS]:
        typer.echo(f"  {would}removed (policy block): {REVIEW_DIR}/{path}")
    if report.manifests_stamped:
        typer.echo(f"recorded the salt's fingerprint in {report.manifests_stamped} run manifest(s) that had none: "
                   "from now on a lost .theurian/review.salt is refused, not remade (docs/secrets.md)")
    if report.rewritten and not dry_run:
        typer.echo(with_project("run `theurian review build` so the review store serves the rewritten records",
                                named_root(project)))
