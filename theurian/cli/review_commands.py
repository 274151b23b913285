"""`theurian review allow | disallow | ingest | status`: review evidence from allowlisted public repositories.

Every command acts on one project: `--project PATH`, else the nearest folder holding `.theurian/` from the
current directory upward. `app` is importable so another module can register more review commands on it.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Final

import typer

from evidence.lake import Lake
from evidence.lake_damage import damaged_manifests, damaged_records
from evidence.lake_runs import ManifestScan
from evidence.lake_scan import content_counts
from evidence.records import KINDS, repository_folder
from ingest import allowlist
from ingest.errors import IngestError
from ingest.retry import DEFAULT_MAX_WAIT_SECONDS
from ingest.withheld import carried, withheld_words
from theurian.cli import (
    review_build_command,
    review_concerns_command,
    review_export_command,
    review_scan_command,
    review_similar_command,
)
from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.lake_damage_words import entries as damage_entries
from theurian.cli.lake_damage_words import line as damage_line
from theurian.cli.max_wait import MAX_WAIT_HELP, wait_seconds
from theurian.cli.pasteable import named_root, with_project
from theurian.cli.project_option import ProjectOption, project_root
from theurian.cli.review_freshness import NEVER_INGESTED, interrupted_next_step, interrupted_runs, run_state
from theurian.cli.review_progress import Progress
from theurian.errors import AlreadyInPlaceError, TheurianError, UsageError
from theurian.project import REVIEW_DIR
from theurian.text import one_line
from theurian.times import parse_date_or_rfc3339

# How far past this machine's clock a --since may be: another machine's clock, or a time copied from a log a
# moment ago, may run a little ahead of this one.
SINCE_CLOCK_SKEW: Final = timedelta(minutes=5)

app = typer.Typer(help="Ingest and inspect review evidence from allowlisted public GitHub repositories.",
                  no_args_is_help=True)
app.command("build")(review_build_command.build)
app.command("similar")(review_similar_command.similar)
app.command("concerns")(review_concerns_command.concerns)
app.command("scan")(review_scan_command.scan)
app.command("export")(review_export_command.export)

@app.command("allow")
def allow(repository: Annotated[str, typer.Argument(help="OWNER/NAME of a public GitHub repository.")],
          project: ProjectOption = None, as_json: JsonSummaryOption = False) -> None:
    """Add OWNER/NAME to the project's review allowlist (.theurian/config.toml); exits 0, saying so, when it is
    already there in any spelling (a set-up step re-run has nothing left to do)."""
    try:
        allowlist.allow(project_root(project), allowlist.parse_repository(repository))
    except AlreadyInPlaceError as exc:
        _nothing_changed(repository, exc, as_json)
        return
    if as_json:
        echo_summary({"repository": repository, "changed": True})
        return
    typer.echo(f"allowed {repository}")


def _nothing_changed(repository: str, exc: AlreadyInPlaceError, as_json: bool) -> None:
    message = f"{exc.message}; nothing changed"
    if as_json:
        echo_summary({"repository": repository, "changed": False, "message": message})
    else:
        typer.echo(message)


@app.command("disallow")
def disallow(repository: Annotated[str, typer.Argument(help="OWNER/NAME to remove (any spelling).")],
             project: ProjectOption = None, as_json: JsonSummaryOption = False) -> None:
    """Remove OWNER/NAME from the allowlist; exits 0, saying so, when it is not there. Evidence already ingested
    stays on disk."""
    try:
        allowlist.disallow(project_root(project), allowlist.parse_repository(repository))
    except AlreadyInPlaceError as exc:  # not there: what was asked for already holds
        _nothing_changed(repository, exc, as_json)
        return
    if as_json:
        echo_summary({"repository": repository, "changed": True})
        return
    typer.echo(f"disallowed {repository}")


def _parse_since(text: str | None) -> datetime | None:
    """`--since` as a moment, refused past the clock (bar SINCE_CLOCK_SKEW): a run from the future covers no pull
    request and still becomes where the next plain ingest starts, so a mistyped year would hide history."""
    if text is None:
        return None
    try:
        since = parse_date_or_rfc3339(text)
    except ValueError:
        raise UsageError(f"--since {text[:60]!r} is not a date (YYYY-MM-DD) or an RFC 3339 time with an offset "
                         "(2026-01-01T09:00:00Z)") from None
    now = datetime.now(UTC)
    if since > now + SINCE_CLOCK_SKEW:
        raise UsageError(f"--since {text[:60]!r} is in the future (this machine's clock says "
                         f"{now:%Y-%m-%dT%H:%M:%SZ}): it would cover no pull request, and the next plain ingest "
                         "would start from this run; name a moment that has passed")
    return since


@app.command("ingest")
def ingest(
    repositories: Annotated[list[str] | None, typer.Argument(
        help="OWNER/NAME… (each must be allowlisted); default: every allowlisted repository.")] = None,
    since: Annotated[str | None, typer.Option(help="Cover pull requests updated since DATE.")] = None,
    full: Annotated[bool, typer.Option(
        "--full", help="Cover every pull request; mark vanished ones.")] = False,
    rescan_open: Annotated[bool, typer.Option(
        "--rescan-open",
        help="Also re-read every open pull request (threads resolve without moving updatedAt).")] = False,
    api_url: Annotated[str | None, typer.Option(
        help="GitHub API base URL (GitHub Enterprise: https://HOST/api/v3); env GITHUB_API_URL.")] = None,
    max_wait: Annotated[float, typer.Option(
        help=f"Longest single wait, {MAX_WAIT_HELP}, for a rate limit or backoff; a longer one stops the run.",
        parser=wait_seconds)] = DEFAULT_MAX_WAIT_SECONDS,
    rekey: Annotated[bool, typer.Option(
        "--rekey", help="Key the lake by the salt now in .theurian/review.salt (made if lost) from this run on; "
                        "see docs/secrets.md.")] = False,
    as_json: JsonSummaryOption = False,
    project: ProjectOption = None,
) -> None:
    """Fetch review history (pull requests, reviews, threads, all comments) into .theurian/review/.

    By default each repository's run covers what changed since its last completed run (with a 10-minute
    overlap). It signs in as the GitHub App the installation config names (\\[github_app]), else with the token
    in GITHUB_TOKEN or GH_TOKEN.
    """
    if full and since is not None:
        raise UsageError("--full and --since cannot be combined")
    root = project_root(project)
    entries = allowlist.read_allowlist(root)
    asked = [allowlist.parse_repository(r) for r in repositories] if repositories else list(entries)
    if not asked:
        raise UsageError("the review allowlist is empty: add one with `theurian review allow OWNER/NAME`")
    parsed_since = _parse_since(since)
    manifests, failures = run_ingest(root, allowlist.require_allowed(entries, asked), since=parsed_since,
                                     full=full, rescan_open=rescan_open, api_url=api_url, max_wait=max_wait,
                                     rekey=rekey)
    _print_summary(manifests, as_json, ok=not failures)
    if parsed_since is not None:
        # A plain ingest after this one starts from this run, so nothing reads what it left out unless asked.
        typer.echo(with_project(
            "note: --since read only pull requests updated since then; older ones no earlier run read stay unread, "
            "and the next plain ingest starts from this run: `theurian review ingest --full` reads them",
            named_root(project)), err=True)
    if failures:
        raise IngestError("; ".join(failures))


def run_ingest(root: Path, repositories: list[str], *, since: datetime | None = None, full: bool = False,
               rescan_open: bool = False, api_url: str | None = None,
               max_wait: float = DEFAULT_MAX_WAIT_SECONDS, rekey: bool = False,
               ) -> tuple[list[dict[str, Any]], list[str]]:
    """Ingest each allowlisted repository of `repositories` into the project's lake, progress on stderr: the run
    manifests (a failed run's too) and one `OWNER/NAME: why` per failed run. `review ingest` and `sync` both run
    this.

    Raises:
        TokenMissingError, GitHubAppError, ConfigError, UsageError: no usable token, app or API URL, before any
            request.
        LakeBusyError: another ingest of this project is running, before any request.
        SaltRefusedError: the salt is lost or not the lake's (`rekey` takes it), before any request or write.
    """
    # githubkit takes about a second to import: only a command that talks to GitHub pays for it.
    from ingest.api_url import api_url_from
    from ingest.client import GitHubClient
    from ingest.credentials import credentials_from
    from ingest.run import RepositoryRun, RunOptions

    # One run per repository: case variants (in the allowlist or the arguments) are the same repository.
    asked = allowlist.unique(repositories)
    url = api_url_from(api_url, os.environ)
    token = credentials_from(os.environ)
    options = RunOptions(since=since, full=full, rescan_open=rescan_open, rekey=rekey)
    progress = Progress(sys.stderr)
    client = GitHubClient(token=token, api_url=url, max_wait=max_wait, on_retry=progress.retry,
                          on_wait=progress.waiting)
    lake, manifests, failures = Lake(root), [], []
    try:
        with lake.writing():  # one ingest of a project at a time: LakeBusyError, before any request
            for repository in asked:
                run = RepositoryRun(lake, client, repository, options, progress=progress.update)
                try:
                    manifests.append(run.run())
                except IngestError as exc:
                    failures.append(f"{repository}: {exc.message}")
                    manifests.append(run.manifest)
                finally:
                    progress.done()
    finally:
        client.close()
    return manifests, failures


def per_hundred_pull_requests(manifest: dict[str, Any]) -> dict[str, float] | None:
    """The run's GraphQL points and requests per 100 pull requests it read (GitHub's own charge, as its answers
    reported it), to one decimal; None for a run that read none."""
    pulls = manifest["pullRequests"]
    if not pulls:
        return None
    return {"points": round(manifest["graphqlPoints"] * 100 / pulls, 1),
            "requests": round(manifest["requests"] * 100 / pulls, 1)}


def _summary(manifest: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in manifest.items() if k != "records"} | {
        "per100PullRequests": per_hundred_pull_requests(manifest)}


def ingest_document(manifests: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary `review ingest --json` prints (and `sync --json` holds for its ingest stage)."""
    return {"runs": [_summary(m) for m in manifests]}


def ingest_lines(manifests: list[dict[str, Any]]) -> list[str]:
    """The ingest summary as `review ingest` prints it: one line per run."""
    lines = []
    for m in manifests:
        counts = "; ".join(
            f"{kind} {c['created']} created, {c['updated']} updated, {c['unchanged']} unchanged"
            + (f", {c['missingUpstream']} missing upstream" if c["missingUpstream"] else "")
            for kind, c in m["counts"].items()
        )
        per100 = per_hundred_pull_requests(m)
        rate = f"; per 100 pull requests {per100['points']} points, {per100['requests']} requests" if per100 else ""
        lines.append(f"{m['repository']}: {m['status']} — {m['pullRequests']} pull requests; {counts}; "
                     f"{m['requests']} requests, {m['graphqlPoints']} points, {m['retries']} retries{rate} "
                     f"(run {m['runId']})")
        lines.extend(review_scan_command.secret_lines(m))
        if withheld := withheld_words(m.get("withheld", [])):
            lines.append(f"  {withheld}")
    return lines


def _print_summary(manifests: list[dict[str, Any]], as_json: bool, *, ok: bool) -> None:
    if as_json:  # a failed run's manifest is in it; its one line follows on stderr
        echo_summary(ingest_document(manifests), ok=ok)
        return
    for line in ingest_lines(manifests):
        typer.echo(line)


@app.command("status")
def status(as_json: JsonSummaryOption = False, project: ProjectOption = None) -> None:
    """Per repository: records on disk by kind, the last run, pull requests withheld by secrets = "block", and
    whether it is still allowlisted."""
    root = project_root(project)
    lake = Lake(root)
    scan = lake.scan_manifests()
    manifests = scan.manifests
    allowlisted = allowlist.read_allowlist(root)
    allowed = {repository_folder(entry) for entry in allowlisted}
    names: dict[str, str | None] = {m["repositoryFolder"]: m["repository"] for m in manifests}
    for entry in allowlisted:
        names.setdefault(repository_folder(entry), entry)
    unreadable = list(scan.unreadable)
    not_folders: list[str] = []  # named like a repository folder, not one inside the lake: named once, not counted
    for folder in lake.repository_folders(not_folders):  # records no manifest names and no allowlist entry covers
        if folder not in names:
            names[folder] = lake.repository_named_in(folder)
    unreadable += not_folders
    rows: list[dict[str, Any]] = []
    for folder, name in sorted(names.items(), key=lambda item: (item[1] is None, (item[1] or item[0]).casefold())):
        runs = [m for m in manifests if m["repositoryFolder"] == folder]
        last = _summary(runs[-1]) if runs else None
        rows.append({"repository": name, "repositoryFolder": folder, "allowlisted": folder in allowed,
                     "records": dict.fromkeys(KINDS, 0) if f"{REVIEW_DIR}/{folder}" in not_folders
                     else lake.folder_record_counts(folder, unreadable), "lastRun": last,
                     "content": content_counts(root, folder).as_json(), "withheld": carried(runs)})
    interrupted_runs(root, [row["lastRun"] for row in rows if row["lastRun"]])
    damaged = _damaged(root, scan, allowed, unreadable, names)
    if as_json:
        echo_summary({"repositories": rows, "unreadableEntries": unreadable, "damagedEntries": damaged})
        return
    if not rows:
        typer.echo(with_project("no repositories allowlisted or ingested (`theurian review allow OWNER/NAME`)",
                                named_root(project)))
    for row in rows:
        records = ", ".join(f"{row['records'][k]} {k}" for k in KINDS)
        last = row["lastRun"]
        run = (f"last run {last['runId']} {run_state(last)} at {last['finishedAt'] or last['startedAt']}"
               if last else NEVER_INGESTED)
        if last and last.get("interrupted"):
            run += f": {interrupted_next_step(last['nextStep'], root)}"
        kept = "" if row["allowlisted"] else "; not allowlisted: kept in the lake (and the store built from it)"
        name = row["repository"] or f"{REVIEW_DIR}/{row['repositoryFolder']} (repository unknown)"
        withheld = f"; {words}" if (words := withheld_words(row["withheld"])) else ""
        typer.echo(f"{name}: {records}; {run}{_content_words(row['content'])}{withheld}{kept}")
    for path in unreadable:
        typer.echo(f"unreadable entry skipped: {one_line(path)} (not a regular file or folder inside the evidence "
                   "lake, or too large to read)")
    for item in damaged:
        typer.echo(damage_line(item))


def _damaged(root: Path, scan: ManifestScan, allowed: set[str], unreadable: list[str],
             names: dict[str, str | None]) -> list[dict[str, str]]:
    """Every damaged file of the lake (`evidence.lake_damage`) not already named unreadable, with its cure. Every
    record file is read, as `content_counts` reads them (status vouches for none: no store is opened)."""
    damage = damaged_manifests(scan)
    try:
        damage += damaged_records(root, scan.manifests)
    except (TheurianError, OSError):
        pass  # a folder linked out of the lake, or one that cannot be listed: named unreadable above
    return damage_entries([item for item in damage if item.path not in unreadable], root, names, allowed)


def _content_words(content: dict[str, Any]) -> str:
    """What status adds about a repository's text: redactions held, and records holding hidden characters."""
    words = []
    if content["redactions"]:
        words.append(f"{content['redactions']} secrets redacted in {content['recordsWithRedactions']} records")
    hidden = [f"{name} in {count}" for name, count in content["hiddenCharacters"].items() if count]
    if hidden:
        words.append("records with hidden characters: " + ", ".join(hidden))
    return "".join(f"; {word}" for word in words)
