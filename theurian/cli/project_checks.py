"""What `theurian doctor` checks in each registered project, one `Check` per question an operator would
otherwise debug by hand, each failing one with the command (or edit) that cures it.

The stores are judged the way the daemon judges them (a review store must verify under this installation's
secret) and against their sources: a run manifest newer than the review store, a HEAD commit newer than the
findings store, a migration not yet applied, an index built over another state.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from evidence.lake import Lake
from evidence.lake_damage import damaged_manifests, damaged_records
from evidence.lake_listing import FileIdentity, LakeEntry, scan_records
from evidence.lake_runs import ManifestScan
from evidence.records import repository_folder
from theurian.cli.error_text import access_text, domain_text, os_error_text
from theurian.cli.lake_damage_words import entries as damage_entries
from theurian.cli.lake_damage_words import folder_names
from theurian.cli.lake_damage_words import listed as damage_listed
from theurian.cli.lake_damage_words import summary as damage_summary
from theurian.cli.pasteable import with_project
from theurian.cli.review_freshness import NEVER_INGESTED, lake_change_since
from theurian.containment import resolve_inside
from theurian.embedding import embedding_model_fault, model_cure
from theurian.errors import TheurianError
from theurian.installation import disclosure_ceiling
from theurian.project import REVIEW_DIR, STATE_DIR, THEURIAN_DIR
from theurian.project_path import path_problem, rename_cure
from theurian.registry import Registration, gone_because, gone_cure, is_project_id, moved_cure
from theurian.text import shell_word
from theurian.times import NOT_RFC3339, parse_rfc3339

if TYPE_CHECKING:
    from projection.errors import ReviewStoreUnavailable
    from theurian.stamped_store import VerifiedStores

OK: Final = "ok"
WARN: Final = "warn"  # worth knowing, never a failure (the exit code ignores it)
FAIL: Final = "fail"


@dataclass(frozen=True)
class Check:
    name: str
    level: str
    state: str
    cure: str = ""
    # The files behind a failing row, each as `lake_damage_words.entries` gives it (the lake row's damaged files):
    # `project status` lists them from the row doctor judged, so the lake is judged once (doctor shows the first).
    files: tuple[dict[str, str], ...] = ()
    # What the row says once those files are listed apart, each with its cure: the first is not named twice.
    listed_state: str = ""


def attributed_to(checks: list[Check], cause: Check, *, shown: bool) -> list[Check]:
    """`checks` with each failing row that failed on `cause`'s own fault (its state carries `cause`'s words: the
    installation config, say, which the model, every review store and every knowledge state read) said to be not
    checked, with `cause`'s cure rather than its own (a rebuild would meet the same fault). `shown`: `cause` is a row
    of the same table, so its words are not repeated. A row failing for a reason of its own is kept as it is."""
    if cause.level != FAIL or not cause.state:
        return checks
    said = " (its row above)" if shown else f": {cause.state}"
    return [replace(c, state=f"not checked: the {cause.name} is refused{said}", cure=cause.cure)
            if c is not cause and c.level == FAIL and cause.state in c.state else c for c in checks]


def project_checks(project_id: str, root: Path) -> list[Check]:
    """Every check of one project, in the order a fix would go (a missing root makes the rest moot)."""
    prefix = f"{project_id}: "
    if not root.is_dir():
        return [Check(prefix + "root", FAIL, f"{root} {gone_because(root)}", gone_cure(Registration(project_id, root)))]
    problem = path_problem(root)
    if problem is not None:  # registered before `register` refused such a path: the rename comes before all else
        return [Check(prefix + "root", FAIL, f"{shell_word(str(root))} {problem}", _rename_cure(project_id, root))]
    try:
        resolve_inside(root, THEURIAN_DIR)
        resolve_inside(root, STATE_DIR)
    except TheurianError as exc:
        return [Check(prefix + ".theurian/", FAIL, exc.message, "make .theurian/ a real folder inside the project")]
    if not (root / THEURIAN_DIR).is_dir():
        return [Check(prefix + ".theurian/", FAIL, "absent", gone_cure(Registration(project_id, root)))]
    checks = [Check("root", OK, str(root))]
    for name, check in _CHECKS:
        try:
            done = check(root)
        except TheurianError as exc:  # one the checks did not foresee: still a row, never a stopped doctor
            done = Check(name, FAIL, domain_text(exc))
        except OSError as exc:  # a file or folder under .theurian/ this user may not read: named, with its cure
            done = _refused_row(name, os_error_text(exc))
        checks.extend(done if isinstance(done, list) else [done])
    # Doctor and project status run from anywhere, over every registered project: a command names the project.
    return [Check(prefix + c.name, c.level, with_project(c.state, root), with_project(c.cure, root), c.files,
                  with_project(c.listed_state, root)) for c in checks]


# Each question a project's checks answer, in the order a fix would go, named as its row is when it fails unforeseen.
_CHECKS: Final[tuple[tuple[str, Callable[[Path], Check | list[Check]]], ...]] = (
    (".theurian/state/ writable", lambda root: _state_writable(root)),
    ("review store", lambda root: _review(root)),
    ("review salt", lambda root: _salt(root)),
    ("findings store", lambda root: _findings(root)),
    ("knowledge state", lambda root: _knowledge(root)),
)


def _rename_cure(project_id: str, root: Path) -> str:
    """The rename that gives a registered `root` a path a project may have, then the registration that follows it
    under the same id (`register --id` takes over an id whose folder holds no `.theurian/`)."""
    if is_project_id(project_id):
        return f"`{rename_cure(root, f'theurian project register {{}} --id {project_id}')}`"
    return f"`{rename_cure(root, None)}`, then {moved_cure(project_id)}"  # a hand-written key: a hand edit keeps it


def _content_policy(root: Path) -> Check:
    """The `[review]` values every ingest, scan and findings build reads (secrets, redact_participants,
    acknowledged_secrets): one they cannot use fails them all, so it fails here, before a sync meets it."""
    from evidence.content_policy import read_policy

    try:
        policy = read_policy(root, make_salt=False)  # writes nothing: the salt row below checks the salt
    except TheurianError as exc:
        return Check("content policy", FAIL, exc.message, "fix the [review] value the message names")
    participants = "pseudonymised" if policy.redact_participants else "shown"
    return Check("content policy", OK, f"secrets {policy.secrets}; participants {participants}; "
                                       f"{len(policy.acknowledged)} acknowledged secret(s)")


def _refused_row(name: str, refused: str, shown: str = "{}") -> Check:
    """The FAIL row of a refusal worded "PROBLEM; CURE" (`disk_faults`' refused reads and writes): the problem
    as its state (placed in `shown`), the cure as its cure."""
    problem, _, cure = refused.partition("; ")
    return Check(name, FAIL, shown.format(problem), cure)


def _unservable_store(exc: ReviewStoreUnavailable) -> Check:
    """The review store row for a store the daemon would refuse: rebuilt, unless this user may not read it (a
    rebuild over it would hide that) or the model is what fails (a build fails on it too), each cured first."""
    reason = exc.reason
    refused = access_text(exc)
    if refused is not None:  # "cannot read PATH: permission denied to this user (U); CURE"
        return _refused_row("review store", refused, "not servable ({})")
    if embedding_model_fault() is not None:
        return Check("review store", FAIL, f"not servable ({reason})",
                     f"{model_cure()}; then `theurian review build`")
    return Check("review store", FAIL, f"not servable ({reason})", "`theurian review build`")


def _state_writable(root: Path) -> Check:
    folder = root / STATE_DIR
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return Check(".theurian/state/ writable", FAIL, exc.strerror or type(exc).__name__,
                     f"make {folder} writable by you (builds write there)")
    return Check(".theurian/state/ writable", OK, "yes")


def _review(root: Path) -> list[Check]:
    from ingest import allowlist
    from projection.errors import ReviewStoreUnavailable
    from projection.review_store import open_store, store_path
    from theurian.stamped_store import VerifiedStores

    # One verification of the store for all the rows that read it (the lake row's hashes, the store row).
    stores = VerifiedStores()
    # A config that cannot be read fails its own row; the lake and the store are still checked (a typo in one
    # key must not hide a stale store).
    try:
        entries = allowlist.read_allowlist(root)
        checks = [Check("allowlist", OK, f"{len(entries)} repositor{'y' if len(entries) == 1 else 'ies'}"),
                  _content_policy(root)]  # read once the file itself is known good: its faults are named once
    except TheurianError as exc:
        entries = []
        checks = [Check("allowlist", FAIL, exc.message, "fix .theurian/config.toml where the line says")]
    lake = Lake(root)
    folders = lake.repository_folders()
    if not folders:
        level = FAIL if entries else OK
        checks.append(Check("evidence lake", level, "empty", "`theurian review ingest`" if entries else ""))
        # A store with no lake behind it (copied from another project, or its lake deleted) is still served.
        try:
            present = store_path(root).exists()
        except TheurianError as exc:
            return [*checks, Check("review store", FAIL, exc.message, "remove it, then `theurian review build`")]
        return [*checks, _orphan_store(root)] if present else checks
    records = sum(sum(lake.folder_record_counts(f).values()) for f in folders)
    scan = lake.scan_manifests()
    manifests = scan.manifests
    checks = [_never_ingested(c, entries, manifests) if c.name == "allowlist" else c for c in checks]
    try:
        listing: list[LakeEntry] | None = scan_records(root, identities=True)[0]
    except (TheurianError, OSError):
        listing = None  # the store row below names what is wrong with the listing
    shown = f"{records} records in {len(folders)} repositor{'y' if len(folders) == 1 else 'ies'} ({REVIEW_DIR})"
    checks.append(_lake_row(root, lake, scan, listing, entries, shown, stores))
    try:
        open_store(root, stores)
        built_ns = store_path(root).stat().st_mtime_ns
    except ReviewStoreUnavailable as exc:
        return [*checks, _unservable_store(exc)]
    except TheurianError as exc:
        return [*checks, Check("review store", FAIL, exc.message, "remove it, then `theurian review build`")]
    built = datetime.fromtimestamp(built_ns / 1e9, UTC)
    untimed = next((m for m in manifests if _run_time(m) is None), None)
    if untimed is not None:
        return [*checks, _untimed_run(untimed)]
    newer = [m for m in manifests if (moment := _run_time(m)) is not None and moment > built]
    if newer:
        return [*checks, Check("review store", FAIL, f"built {built:%Y-%m-%d %H:%M}Z; {len(newer)} ingest run(s) "
                                                     "since", "`theurian review build`")]
    try:
        changed = lake_change_since(root, folders, built_ns, listing)
    except (TheurianError, OSError) as exc:
        reason = exc.message if isinstance(exc, TheurianError) else exc.strerror or type(exc).__name__
        return [*checks, Check("review store", FAIL, f"the lake cannot be listed to compare ({reason})",
                               "`theurian review build` names what is wrong")]
    if changed is not None:
        return [*checks, Check("review store", FAIL, f"built {built:%Y-%m-%d %H:%M}Z; {changed}: not current "
                                                     "with the lake", "`theurian review build`")]
    return [*checks, Check("review store", OK, f"built here {built:%Y-%m-%d %H:%M}Z, current with the lake")]


def _never_ingested(row: Check, entries: list[str], manifests: list[dict[str, Any]]) -> Check:
    """The allowlist row, a warning when an allowlisted repository has no run at all: an ingest that fails before
    it has shown the repository public (not found, private, a wrong name) writes no run manifest, so the lake
    itself keeps no trace of it, and a nightly sync failing on it would otherwise leave every row ok."""
    from evidence.records import repository_folder

    ingested = {m["repositoryFolder"] for m in manifests}
    never = [entry for entry in entries if repository_folder(entry) not in ingested]
    if row.level != OK or not never:
        return row
    more = f" and {len(never) - 1} more" if len(never) > 1 else ""
    return replace(row, level=WARN, state=f"{row.state}; {never[0]}{more} {NEVER_INGESTED} (an ingest that failed "
                   "before its first page leaves no run)", cure=f"`theurian review ingest {never[0]}` says why")


def _lake_row(root: Path, lake: Lake, scan: ManifestScan, listing: list[LakeEntry] | None, allowlisted: list[str],
              shown: str, stores: VerifiedStores) -> Check:
    """OK with `shown`, or FAIL naming the damaged files (`evidence.lake_damage`) and the cure of the first. The
    files the last build read and recorded unchanged are judged by the hash its store holds, unread, so a doctor
    over a lake built whole reads no record file."""
    damage = damaged_manifests(scan)
    if listing is not None:
        damage += damaged_records(root, scan.manifests, entries=listing, vouched=_vouched(root, stores))
    if not damage:
        return Check("evidence lake", OK, shown)
    names = folder_names(lake, scan.manifests, allowlisted, damage)
    files = damage_entries(damage, root, names, {repository_folder(entry) for entry in allowlisted})
    return Check("evidence lake", FAIL, f"{shown}; {damage_summary(damage, root)}", files[0]["cure"], tuple(files),
                 f"{shown}; {damage_listed(damage)}")


def _vouched(root: Path, stores: VerifiedStores) -> dict[str, tuple[FileIdentity, str]] | None:
    """Record path -> (identity, hash) of each file the review store's build read and recorded (its file record,
    `projection.review_reuse`, and its rows' hashes); None when there is no store that verifies, or no record."""
    from projection.errors import ReviewStoreUnavailable
    from projection.review_reuse import recorded_files
    from projection.review_store import open_store, publish_path
    from projection.review_threads import stored_hashes
    from theurian.installation import build_stamp_secret

    try:
        open_store(root, stores)  # verified under this installation's secret, which therefore exists
        recorded = recorded_files(publish_path(root), build_stamp_secret())
        if recorded is None:
            return None
        hashes = stored_hashes(root, stores)
    except (ReviewStoreUnavailable, TheurianError):
        return None
    return {path: (identity, hashes[path]) for path, identity in recorded.files.items() if path in hashes}


def _salt(root: Path) -> Check:
    """Whether the next command that keys the lake would take the salt: a lost or foreign one is a failure here,
    as it is a refusal there (`evidence.content_policy.salt_refusal`, which writes nothing)."""
    from evidence.content_policy import SALT_FILE, salt_exists, salt_refusal

    try:
        refusal = salt_refusal(root)
    except TheurianError as exc:
        return Check("review salt", FAIL, exc.message, f"restore {SALT_FILE} from the backup")
    if refusal is not None:
        return Check("review salt", FAIL, refusal.problem, refusal.cure)
    return Check("review salt", OK, SALT_FILE if salt_exists(root) else "not made yet (the first ingest makes it)")


def _orphan_store(root: Path) -> Check:
    """The review store of a project whose lake is empty: right only when it is empty too (a build from it)."""
    from projection.errors import ReviewStoreUnavailable
    from projection.review_store import READ_FAULTS, STORE_RELATIVE, open_store

    try:
        cursor = open_store(root).cursor()
    except ReviewStoreUnavailable as exc:
        return _unservable_store(exc)
    try:
        [(records,)] = cursor.execute("SELECT count(*) FROM s.records").fetchall()
    except READ_FAULTS:
        return Check("review store", FAIL, "not servable (unreadable)", "`theurian review build`")
    finally:
        cursor.close()
    if records == 0:
        return Check("review store", OK, "built here, empty like the lake")
    return Check("review store", FAIL, f"built from a lake that is no longer here: the lake is empty, yet "
                 f"review.search, review.findSimilar and the daemon serve this store's {records} records",
                 f"`theurian review build` (publishes an empty store), or remove {STORE_RELATIVE}")


def _run_time(manifest: dict[str, object]) -> datetime | None:
    """When the run ended (or began, while it runs), or None when the manifest's time is not a full RFC 3339
    timestamp with an offset (its schema's `format` is only an annotation, and a lake can arrive by clone)."""
    try:
        return parse_rfc3339(str(manifest.get("finishedAt") or manifest.get("startedAt")))
    except ValueError:
        return None


def _untimed_run(manifest: dict[str, object]) -> Check:
    key = "finishedAt" if manifest.get("finishedAt") else "startedAt"
    run_id = str(manifest.get("runId"))[:40]
    return Check("review store", FAIL, f"not judged: run {run_id}'s {key} {str(manifest.get(key))[:40]!r} is "
                 f"{NOT_RFC3339}, so whether the store is older than that run is unknown",
                 f"write a full timestamp (2026-01-01T00:00:00Z) there in {REVIEW_DIR}/runs/{run_id}.json, or "
                 "remove that file")


def _findings(root: Path) -> Check:
    from projection.errors import FindingsStoreUnavailable
    from projection.findings_store import FindingFilter, read_findings, store_path
    from projection.git_head import in_repository

    path = store_path(root)
    with contextlib.suppress(FileNotFoundError):
        # A state folder this user may not enter raises PermissionError here, which `project_checks` names with
        # its cure (the read below would only call the store unreadable and cure it with a build that fails alike).
        path.lstat()
    try:
        # The tool's own read: it refuses a store HEAD was committed after (stale) as it refuses a damaged one.
        read_findings(root, FindingFilter(), 1)
    except FindingsStoreUnavailable as exc:
        return Check("findings store", FAIL, f"not servable ({exc.reason})", "`theurian findings build`")
    built = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    if not in_repository(root):
        return Check("findings store", OK, f"built {built:%Y-%m-%d %H:%M}Z, empty: the project is not inside a git "
                     "repository")
    return Check("findings store", OK, f"built {built:%Y-%m-%d %H:%M}Z, current with HEAD")


def _pending(root: Path, count: int) -> Check:
    """The row for `count` pending migrations: their cure is `migrate apply`, unless it would refuse them (what
    `migrate validate` checks, nothing applied), when the cure is mending the one it names."""
    from knowledge.rehearsal import rehearse

    try:
        rehearse(root)
    except TheurianError as exc:
        return Check("knowledge state", FAIL, f"{count} migration(s) pending, which `migrate apply` would refuse: "
                     f"{exc.message}", "correct that migration (`theurian migrate validate` checks them all), "
                     "then `theurian migrate apply`")
    return Check("knowledge state", FAIL, f"{count} migration(s) pending", "`theurian migrate apply`")


def _knowledge(root: Path) -> list[Check]:
    from knowledge.apply import REFUSED_STATE, REFUSED_STATE_CURE, migration_status
    from knowledge.index_status import CURRENT, index_status
    from knowledge.state import read_pointer

    try:
        status = migration_status(root)
        pointer = read_pointer(root)
    except TheurianError as exc:
        refused = access_text(exc)  # a state this user may not read is not damaged: a rebuild would not reach it
        if refused is not None:
            return [_refused_row("knowledge state", refused)]
        return [Check("knowledge state", FAIL, exc.message, "`theurian migrate apply`")]
    if status.edited:
        state = Check("knowledge state", FAIL, f"applied migration edited since: {status.edited[0]} "
                                               "(MIGRATION_CHECKSUM_MISMATCH)",
                      "restore the applied file as it was (git checkout), and write a new migration instead")
    elif status.refused:
        # Not "N pending": the migrations were applied, but into a state this installation cannot vouch for.
        state = Check("knowledge state", FAIL, REFUSED_STATE, REFUSED_STATE_CURE)
    elif status.pending:
        state = _pending(root, len(status.pending))
    elif pointer is None:
        return [Check("knowledge state", OK, "no migrations")]
    else:
        state = Check("knowledge state", OK, f"{len(status.applied)} migration(s) applied")
    if pointer is None:
        return [state]
    index = index_status(root, disclosure_ceiling())
    if index.state != CURRENT:
        cure = index.cure or ""
        return [state, Check("retrieval index", FAIL, index.describe().removesuffix(f" ({cure})"), cure)]
    return [state, Check("retrieval index", OK, index.describe())]
