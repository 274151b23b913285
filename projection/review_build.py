"""`theurian review build`: the evidence lake under `.theurian/review/`, into the review store.

Every record file is read, parsed with orjson, checked against its schema (`evidence.fast_check`) and rendered
into its rows (`review_rows`) — by this process and, for a large lake, forked children, each taking a share
(`review_read`, over `theurian.forked`). A bad file is reported by its project-relative path and skipped. The rows
are sorted into the total order and written as newline-delimited JSON into a temp folder beside the store,
digested as written, each file bulk-loaded by DuckDB while the next is written (`review_load`;
docs/review-search.md has the measurements that chose this route). The file is stamped, fsynced and swapped in with
`os.replace`: a reader holding the old store is never disturbed, and a failed build leaves the old store exactly as
it was. A record whose file is unchanged since the store being replaced was built is taken over from it
(`review_reuse`), and meanwhile the concern clustering that the changed records make it redo runs on a thread of
its own (`concern_ahead`).
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from evidence.lake_listing import scan_records
from evidence.lake_runs import last_seen, read_manifests
from projection.build_temp import building_folder, sweep_leftovers
from projection.concern_ahead import ClusteringAhead, clustering_ahead
from projection.concern_reuse import StoredClustering
from projection.duckdb_interrupts import interrupts_through_duckdb
from projection.errors import ReviewLakeNotAFolder, ReviewStoreIsAFolder
from projection.review_concerns import ConcernsFound, build_concerns
from projection.review_digest import HeldDigest, LineDigest, remember_verified
from projection.review_layout import EVIDENCE_FORMAT_VERSION, REVIEW_SCHEMA_VERSION, SCHEMA, STORE_KIND
from projection.review_load import loading, write_rows
from projection.review_pairs import pairs_building
from projection.review_read import collector_paused, default_processes, read_records
from projection.review_reuse import recorded_files, remember_files, take_over, unchanged
from projection.review_rows import Projected, RecordFacts
from projection.review_store import STORE_RELATIVE, file_identity, publish_path, wal_path
from projection.review_vectors import Embedded, PreviousStore, model_line, previous_store, vector_lines
from theurian.containment import resolve_inside
from theurian.durable import publish_built_file
from theurian.embedding import EmbeddingModel, load_model
from theurian.forked import fork_is_safe
from theurian.installation import build_stamp_secret
from theurian.interrupts import Interrupts
from theurian.project import REVIEW_DIR
from theurian.stamp import INSERT_STAMP_SQL, StampFields, new_build_id, stamp_row
from theurian.stamped_store import VerifiedStores
from theurian.text import one_line


@dataclass(frozen=True)
class BuildSummary:
    """What a build read and wrote; `skipped` names each file left out, project-relative, with why."""

    store: str  # project-relative
    records: int
    texts: int
    skipped: list[tuple[str, str]] = field(default_factory=list)
    build_id: str = ""
    processes: int = 1  # how many processes read the lake
    embedded: int = 0  # vectors made by this build
    reused: int = 0  # vectors taken over from the store it replaced (records whose file is unchanged)
    records_reused: int = 0  # records taken over from the store it replaced, their files not read
    concerns: int = 0  # recurring concerns found (projection.review_concerns)
    clustering_reused: bool = False  # the concern clustering taken over from the store it replaced (concern_reuse)
    clustering_ahead: bool = False  # the clustering formed while the unchanged records were taken over (concern_ahead)

    def describe(self) -> str:
        # A lake file's name is whatever the folder holds (a lake can arrive by clone): escaped, one line each.
        lines = [f"skipped {one_line(path)}: {one_line(why)}" for path, why in self.skipped]
        readers = f"; read by {self.processes} processes" if self.processes > 1 else ""
        if self.records_reused:
            lines.append(f"records: {self.records - self.records_reused} read from the lake, {self.records_reused} "
                         "unchanged taken over from the store it replaces")
        reused = " (clustering unchanged, taken over from the store it replaces)" if self.clustering_reused else \
            " (clustered while the unchanged records were taken over)" if self.clustering_ahead else ""
        lines.append(f"concerns: {self.concerns} recurring concerns found{reused}")
        lines.append(f"embeddings: {self.embedded} made, {self.reused} reused from the store it replaces")
        lines.append(
            f"built {self.store}: {self.records} records ({self.texts} texts); "
            f"{len(self.skipped)} invalid files skipped{readers}"
        )
        return "\n".join(lines)


def build_review_store(root: Path, processes: int | None = None, *, full: bool = False) -> BuildSummary:
    """Rebuild the review store of the project at `root` from its evidence lake.

    Incremental unless `full`: a record whose file is unchanged since the store this build replaces was built
    (by file identity, `projection.review_reuse`) is taken over from that store rather than read again; the store
    is the same either way.

    `processes`: how many processes read the lake (this one and forked children, `theurian.forked`); by
    default one per usable CPU for a lake large enough to repay the forks. The store is the same either way.

    The store path is resolved (and its containment checked) before any evidence file is read. The new store
    replaces the state folder's entry itself, never a link's target (`review_store.publish_path`).

    Raises:
        PathEscapeError: `.theurian/state` or `.theurian/review` resolves outside `root`.
        ReviewStoreEscapeError: the store file resolves outside `.theurian/state/`.
        ConfigError: the installation's build-stamp secret is damaged.
        ReviewLakeNotAFolder: `.theurian/review` exists and is not a folder (the old store is kept).
        ReviewStoreIsAFolder: a folder sits at the store's name.
        ReviewStorePathUnsupported: the store's path holds a character DuckDB cannot open a database through.
    """
    with interrupts_through_duckdb() as interrupts:
        return _build(root, processes, interrupts, full)


def _build(root: Path, processes: int | None, interrupts: Interrupts, full: bool) -> BuildSummary:
    target = publish_path(root)
    secret = build_stamp_secret()
    lake = resolve_inside(root, REVIEW_DIR)
    _refuse_unbuildable(lake, target)
    runs = read_manifests(root)
    seen = last_seen(runs.manifests)
    skipped = [(f"{REVIEW_DIR}/{path}", why) for path, why in runs.skipped]
    with collector_paused():
        scan_started = time.time_ns()
        entries, problems = scan_records(root, identities=True)
        skipped += [(f"{REVIEW_DIR}/{found.record_path}", found.error or "invalid") for found in problems]
        recorded = None if full else recorded_files(target, secret)
        same, changed = unchanged(entries, recorded)
        forking = fork_is_safe()  # decided now: the load below starts threads, after which no process forks
        wanted = processes if processes is not None else default_processes(len(changed), forking)
        replaced = VerifiedStores()  # the store this build replaces, opened and verified once for its two readers
        embedding = _EmbeddingInputs(root, replaced)
        projected, bad, readers = read_records(lake, changed, seen, wanted if forking else 1, embedding.load)
        interrupts.check()  # a Ctrl-C that native code swallowed while the lake was read
        model, previous = embedding.loaded()
        with clustering_ahead() as ahead:
            reused: list[Projected] | None = []
            if recorded is not None and same:
                read, words = list(projected), recorded.words
                reused = take_over(root, recorded, same, seen, replaced,
                                   lambda kept: ahead.start(read, kept, words, previous, model))
            del replaced  # closes it: the pages it read need not stay cached while the new store is written
            if reused is None:  # the store there is not the one recorded: its rows are not these files' rows
                reused = []
                rows, more, _ = read_records(lake, same, seen, 1)
                projected += rows
                bad += more
            projected += reused
            skipped += bad
            projected.sort(key=lambda item: item.sort_key)
            target.parent.mkdir(parents=True, exist_ok=True)
            target = publish_path(root)  # the state folder now exists: check again that creating it escaped nowhere
            sweep_leftovers(target.parent, target.name)  # what an interrupted build before this one left behind
            build_id = new_build_id()
            counts = Embedded()
            embeddings = (vector_lines(projected, model, previous.vectors, counts, ahead.embedded()),
                          model_line(model.identity))
            texts, stamp, concerns = _write_store(target, projected, build_id, secret, interrupts, embeddings,
                                                  model, lake, (counts.stored, previous.clustering, previous.facts),
                                                  ahead)
    remember_files(target, build_id, stamp, secret, entries, {item.sort_key[3]: item.words for item in projected},
                   scan_started)
    skipped.sort()
    return BuildSummary(STORE_RELATIVE, len(projected), texts, skipped, build_id, readers,
                        counts.embedded, counts.reused, len(reused), *concerns)


def _refuse_unbuildable(lake: Path, target: Path) -> None:  # raises as `build_review_store` says
    if os.path.lexists(lake) and not lake.is_dir():
        raise ReviewLakeNotAFolder(
            f"{REVIEW_DIR} is not a folder, so there is no evidence lake to build from; the store was left as it "
            f"was. Remove or rename {REVIEW_DIR}, then ingest again and run `theurian review build`."
        )
    if os.path.isdir(target) and not os.path.islink(target):
        raise ReviewStoreIsAFolder(
            f"{STORE_RELATIVE} is a folder, so no store can be put in its place; nothing was built. Remove it "
            f"(`rm -r {STORE_RELATIVE}`: derived state, nothing authored is lost), then run `theurian review build`."
        )


@dataclass
class _EmbeddingInputs:
    """The model and what the build takes over from the store it replaces (`previous_store`), loaded once: by
    `load` while forked readers still read their shares, or by `loaded` when the build comes to need them."""

    root: Path
    replaced: VerifiedStores | None = None  # where the store it replaces is opened; let go of once read
    model: EmbeddingModel | None = None
    previous: PreviousStore = field(default_factory=PreviousStore.nothing)

    def load(self) -> None:
        if self.model is None:
            self.model = load_model()
            self.previous = previous_store(self.root, self.model.identity, self.replaced)
            self.replaced = None

    def loaded(self) -> tuple[EmbeddingModel, PreviousStore]:
        self.load()
        assert self.model is not None  # load() sets it
        return self.model, self.previous


def _write_store(target: Path, projected: list[Projected], build_id: str, secret: bytes,
                 interrupts: Interrupts, embeddings: tuple[Iterable[bytes], bytes],
                 model: EmbeddingModel, lake: Path,
                 concern_inputs: tuple[dict[int, str], StoredClustering | None, dict[str, RecordFacts]],
                 ahead: ClusteringAhead) -> tuple[int, str, ConcernsFound]:
    with building_folder(target.parent, target.name) as temp:
        database = temp / "store.duckdb"
        digest = LineDigest()
        connection = duckdb.connect(str(database))
        try:
            connection.execute(SCHEMA)
            # The pairs build as soon as the texts are loaded, while the later tables load and the concerns are
            # found; they are digested once the rows' tables are, and the concerns (held) after them.
            texts_loaded: Future[None] = Future()
            rows_digested: Future[None] = Future()
            held = HeldDigest()
            with pairs_building(connection, digest, interrupts, texts_loaded, rows_digested):
                with loading(connection, interrupts) as loader:
                    text_count = write_rows(temp, projected, digest, loader, embeddings, texts_loaded)
                rows_digested.set_result(None)
                concerns = build_concerns(connection, held, projected, model, lake, *concern_inputs, ahead)
            held.release(digest)
            fields = StampFields(STORE_KIND, REVIEW_SCHEMA_VERSION, EVIDENCE_FORMAT_VERSION, build_id,
                                 len(projected), digest.hexdigest())
            row = stamp_row(fields, secret)
            connection.execute(INSERT_STAMP_SQL, row)
            stamp = str(row[-1])
            connection.execute("CHECKPOINT")
        finally:
            connection.close()
        # The published file replaces the store whole: a WAL beside the old one belongs to no store this build
        # made, and a reader refuses a store with one beside it. Removed first, so the new file never has one.
        # The last check is the point of no return: a Ctrl-C before it stops the build and keeps the old store; one
        # from it on (during the swap included) is held and then forgotten: the build runs to its end and is
        # reported as built (`Interrupts.done`).
        with interrupts.deferred():
            interrupts.check()  # the last moment a Ctrl-C can still keep the old store
            remove_stale_wal(target)
            publish_built_file(database, target)
            interrupts.done()
        # The rows just loaded are the lines just digested: vouch for this very file, so its first reader
        # need not read every row back (projection.review_digest).
        remember_verified(target, file_identity(target), build_id, stamp, secret)
    return text_count, stamp, concerns


def remove_stale_wal(target: Path) -> None:
    """Remove whatever sits at the store's WAL name in the resolved state folder, never following a link: a link
    (or a FIFO, or a file) is unlinked itself, a real folder removed without following any link inside it.

    Raises:
        OSError: it could not be removed (the build fails rather than publish a store every read would refuse).
    """
    wal = wal_path(target)
    try:
        mode = os.lstat(wal).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(wal)
    else:
        os.unlink(wal)
