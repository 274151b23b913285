"""The stages of `theurian sync`, each running exactly what its own command runs, or saying why it has nothing to do.

A stage never raises a domain error: it answers a `StageOutcome` (done, skipped with the reason, or failed with the
one-line message its own command would have printed). A Ctrl-C is never caught here: it stops the sync where it is,
and every stage already leaves the files it was writing whole (each publishes by atomic replace).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from theurian.cli.error_text import domain_text, escape_text, os_error_text, unexpected_text
from theurian.errors import PathEscapeError, TheurianError
from theurian.text import one_line

Outcome = Literal["done", "skipped", "failed"]

INGEST: Final = "review ingest"
REVIEW_BUILD: Final = "review build"
FINDINGS_BUILD: Final = "findings build"
MIGRATE_APPLY: Final = "migrate apply"
INDEX_BUILD: Final = "index build"
STAGES: Final = (INGEST, REVIEW_BUILD, FINDINGS_BUILD, MIGRATE_APPLY, INDEX_BUILD)


@dataclass(frozen=True)
class StageOutcome:
    """One stage's result. `lines`: what its command prints (done), or the reason (skipped) or the error (failed),
    one line each. `summary`: the `summary` of what its command prints with `--json`, when it ran far enough to have
    one."""

    stage: str
    outcome: Outcome
    lines: list[str]
    summary: dict[str, Any] | None = None

    def document(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "outcome": self.outcome,
            "reason": "\n".join(self.lines) if self.outcome == "skipped" else None,
            "error": "\n".join(self.lines) if self.outcome == "failed" else None,
            "summary": self.summary,
        }


@dataclass(frozen=True)
class SyncOptions:
    ceiling: str  # the installation's disclosure ceiling, which the index is built under
    api_url: str | None = None
    max_wait: float | None = None  # None: the ingest's own default
    earlier: list[StageOutcome] = field(default_factory=list)  # the stages already run, in order


def run_stage(name: str, root: Path, options: SyncOptions) -> StageOutcome:
    """Run one stage; any error it raises becomes a failed outcome with the line the top-level handler would print
    for it (`theurian.cli.main`), so a stage that fails (a DuckDB or SQLite error on a full disk included) never
    stops the stages after it. A Ctrl-C is not an `Exception`: it stops the sync."""
    runner = _RUNNERS[name]
    try:
        return runner(root, options)
    except PathEscapeError as exc:
        return StageOutcome(name, "failed", [one_line(escape_text(exc))])
    except TheurianError as exc:
        return StageOutcome(name, "failed", [one_line(domain_text(exc))])
    except OSError as exc:
        return StageOutcome(name, "failed", [one_line(os_error_text(exc))])
    except Exception as exc:  # noqa: BLE001 - a stage's failure is reported on its line; the others still run
        return StageOutcome(name, "failed", [one_line(unexpected_text(exc))])


def _ingest(root: Path, options: SyncOptions) -> StageOutcome:
    from ingest import allowlist
    from ingest.retry import DEFAULT_MAX_WAIT_SECONDS
    from theurian.cli.review_commands import ingest_document, ingest_lines, run_ingest

    entries = allowlist.read_allowlist(root)
    if not entries:
        return StageOutcome(INGEST, "skipped", [
            "the review allowlist is empty: add a repository with `theurian review allow OWNER/NAME`"])
    wait = DEFAULT_MAX_WAIT_SECONDS if options.max_wait is None else options.max_wait
    manifests, failures = run_ingest(root, entries, api_url=options.api_url, max_wait=wait)
    lines = [one_line(line) for line in ingest_lines(manifests)]
    if failures:
        return StageOutcome(INGEST, "failed", [*lines, one_line("; ".join(failures))], ingest_document(manifests))
    return StageOutcome(INGEST, "done", lines, ingest_document(manifests))


def _review_build(root: Path, options: SyncOptions) -> StageOutcome:
    from evidence.lake import Lake
    from theurian.cli.review_build_command import build_document, run_build, skipped_note
    from theurian.containment import resolve_inside
    from theurian.interrupts import import_duckdb_held

    import_duckdb_held()  # the store's module loads DuckDB
    from projection.review_store import STORE_RELATIVE

    # An empty lake with no store to replace: building would publish an empty store, and review.search would then
    # answer "nothing found" where the truth is "nothing ingested". With a store in place, a build follows the lake.
    # Resolved inside the project first: a store place that escapes fails the stage, naming the cure, as the build
    # itself would, rather than being looked at outside the project.
    if not Lake(root).repository_folders() and not os.path.lexists(resolve_inside(root, STORE_RELATIVE)):
        return StageOutcome(REVIEW_BUILD, "skipped", [
            "the evidence lake (.theurian/review/) holds no repository yet: nothing to build a review store from"])
    summary = run_build(root)
    lines = [one_line(line) for line in summary.describe().splitlines()]
    if (note := skipped_note(summary, root)) is not None:
        lines.append(one_line(note))
    return StageOutcome(REVIEW_BUILD, "done", lines, build_document(summary))


def _findings_build(root: Path, options: SyncOptions) -> StageOutcome:
    from projection.errors import FindingsStoreUnavailable
    from projection.findings_store import FindingFilter, read_findings
    from projection.git_head import in_repository
    from theurian.cli.findings_commands import findings_document, run_findings_build

    if not in_repository(root):  # no history: once its empty store is in place, there is nothing to read again
        try:
            read_findings(root, FindingFilter(), 1)  # the tool's own read: refused when absent, foreign or damaged
        except FindingsStoreUnavailable:
            pass
        else:
            return StageOutcome(FINDINGS_BUILD, "skipped", [
                "the project is not inside a git repository: no history, and its empty findings store is in place"])
    summary = run_findings_build(root)  # outside git too: its empty store is what review.findings then serves
    return StageOutcome(FINDINGS_BUILD, "done", [one_line(summary.describe())], findings_document(summary))


def _migrate_apply(root: Path, options: SyncOptions) -> StageOutcome:
    from knowledge.apply import apply_migrations
    from theurian.cli.migrate_commands import apply_document, apply_lines

    outcome = apply_migrations(root)
    lines = [one_line(line) for line in apply_lines(outcome)]
    return StageOutcome(MIGRATE_APPLY, "done" if outcome.rebuilt else "skipped", lines, apply_document(outcome))


def _index_build(root: Path, options: SyncOptions) -> StageOutcome:
    from knowledge.index import build_index, open_index
    from knowledge.index_pointer import read_index_pointer
    from knowledge.state import read_pointer
    from theurian.cli.index_commands import index_document, index_line, keeps_summary_tree
    from theurian.embedding import load_model

    if any(earlier.stage == MIGRATE_APPLY and earlier.outcome == "failed" for earlier in options.earlier):
        return StageOutcome(INDEX_BUILD, "skipped", [
            "migrate apply failed, so the active state did not change: the published index still matches it "
            "if it did before"])
    state, index = read_pointer(root), read_index_pointer(root)
    # An index built with another embedding model still answers, but without its dense and summary channels.
    model = load_model()
    if (state is not None and index is not None and index.state_hash == state.state_hash
            and index.disclosure_ceiling == options.ceiling and index.model == model.identity):
        connection = open_index(root, index)  # the check knowledge.search makes before it ranks with an index
        if connection is not None:
            connection.close()
            # The summary of the index it keeps, in `index build --json`'s shape, as a skipped migrate apply
            # carries the active state's: a skipped stage's summary is what is in place (docs/operating.md).
            return StageOutcome(INDEX_BUILD, "skipped", [
                f"index {index.build_id} already covers state {state.state_hash} under the "
                f"{options.ceiling} ceiling"], index_document(index))
    # As `index build` with neither --raptor nor --no-raptor: the summary tree is kept when the index has one.
    published = build_index(root, options.ceiling, raptor=keeps_summary_tree(root), model=model)
    return StageOutcome(INDEX_BUILD, "done", [index_line(published)], index_document(published))


_RUNNERS: Final[dict[str, Callable[[Path, SyncOptions], StageOutcome]]] = {
    INGEST: _ingest,
    REVIEW_BUILD: _review_build,
    FINDINGS_BUILD: _findings_build,
    MIGRATE_APPLY: _migrate_apply,
    INDEX_BUILD: _index_build,
}
