"""The incremental review build: rows taken over from the store a build replaces, for each record whose file is
unchanged since that store was built.

How a change is seen: file identity, as git's index does it. The build that makes a store records, for every
record file it stored, the file's (device, inode, size, mtime, ctime) as its scan saw them (`lstat`, one system
call a file: reading and hashing every file would cost as much as the parse an incremental build exists to
skip). The next build takes a record over only when its file's identity is exactly the recorded one. An ingest
or `review scan` replaces a file (a new inode); an edit in place moves mtime and ctime; a tool that sets mtime
back (`cp -p`, `rsync -a`, `touch -d`) cannot set ctime back. One gap remains, the one git calls "racily clean":
a file changed in place within the file system's timestamp granularity of the scan that recorded it, at its
old size. So a file whose mtime or ctime lies within RACY_NS of that scan's start is not recorded, and the next
build reads it again. A link is never taken over (its target can change under an unchanged link).
`theurian review build --full` distrusts every identity and reads everything.

What vouches for the record. It lives in this installation's state folder (`<state>/review-files/`, never in a
project), written after the store is published, HMAC'd under the installation secret and bound to that store's
path, build id and stamp and to this program's version. Nothing is taken over unless the store at the path
opens verified (`review_store.open_store`: stamp, catalog, rows digest, embedding model) and its build id and
stamp are the record's: a store of another schema, model or installation, a store rebuilt since, or a record
from another version of theurian never lends a row. Taken over means: the record's stored fields and texts, read
back from that store; everything derived from other files (its last-seen run, from the current manifests) and
everything positional (ordinals, word blocks, pairs, the digest) is made afresh by the one write path, so the
store is the one a full build makes (`tests/projection/test_review_incremental.py` compares them table by table).

The record also keeps each recorded file's words (`Projected.words`, the distinct folded words of its texts), as
the build that made the store derived them from the very texts it stored: a record taken over has those texts,
so its words are these, and splitting every text again (most of the cost of rendering a record) is skipped. The
same HMAC, store binding and version vouch for them.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any, Final

import duckdb
import orjson

from evidence.lake_listing import FileIdentity, LakeEntry
from evidence.lake_runs import LastSeen
from projection.errors import ReviewStoreUnavailable
from projection.review_rows import STORED_FIELDS, Projected, assemble
from projection.review_store import READ_FAULTS, fetched_rows, open_store
from theurian.errors import PathEscapeError
from theurian.installation import state_dir
from theurian.stamped_store import VerifiedStores

FILES_DIR: Final = "review-files"
# Wider than any file system's timestamp granularity a project is likely to sit on (ext4, XFS, Btrfs and tmpfs
# stamp at the kernel's clock tick, ~4 ms; ext3 and HFS+ at one second).
RACY_NS: Final = 1_000_000_000
_DOMAIN: Final = b"theurian-review-files/2\n"  # /2: the record keeps each file's words
# Ordinals whose texts a take-over reads at once: about 60,000 text rows of the benchmark's lake, a few tens of MB.
TEXT_BATCH: Final = 32_768


@dataclass(frozen=True)
class RecordedFiles:
    """What the build of the store at `store` recorded: its build id and stamp, and each record file's identity."""

    build_id: str
    stamp: str
    files: dict[str, FileIdentity]  # record path (relative to .theurian/review/) -> identity
    words: dict[str, str]  # record path -> its `Projected.words` as the build derived them


def _record_path(store: Path) -> Path:
    name = hashlib.sha256(str(store).encode("utf-8")).hexdigest()[:32]
    return state_dir() / FILES_DIR / f"{name}.json"


def _version() -> str:
    import theurian

    return str(theurian.__version__)


def remember_files(store: Path, build_id: str, stamp: str, secret: bytes, entries: Iterable[LakeEntry],
                   stored: Mapping[str, str], scan_started_ns: int) -> None:
    """Record the identity and the words of each of `entries` whose record the store at `store` now holds
    (`stored`: record path -> its `Projected.words`), bar the links and the racily clean. Best effort: a record
    that cannot be written only makes the next build read all."""
    cutoff = scan_started_ns - RACY_NS
    files: dict[str, FileIdentity] = {}
    for entry in entries:
        identity = entry.identity
        if identity is None or entry.is_link or max(identity[3], identity[4]) >= cutoff:
            continue
        relative = entry.relative  # a property that formats the path: read once
        if relative in stored:
            files[relative] = identity
    # In the order of `files`; NUL, which joins the words, becomes a space on disk (one byte, where JSON spells a
    # NUL in six): a word never holds whitespace, so the string holds no space and the swap is undone exactly.
    words = [stored[path].replace("\x00", " ") for path in files]
    body = orjson.dumps({"store": str(store), "buildId": build_id, "stamp": stamp, "version": _version(),
                         "files": files, "words": words})
    target = _record_path(store)
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        temp.write_bytes(hmac.new(secret, _DOMAIN + body, hashlib.sha256).hexdigest().encode("ascii") + b"\n" + body)
        os.replace(temp, target)


def recorded_files(store: Path, secret: bytes) -> RecordedFiles | None:
    """The genuine record for the store at `store` written by this version of theurian, or None."""
    try:
        data = _record_path(store).read_bytes()
    except OSError:
        return None
    mac, _, body = data.partition(b"\n")
    expected = hmac.new(secret, _DOMAIN + body, hashlib.sha256).hexdigest().encode("ascii")
    if not hmac.compare_digest(mac, expected):
        return None
    try:
        fields = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if fields.get("store") != str(store) or fields.get("version") != _version():
        return None
    files: dict[str, FileIdentity] = dict(zip(fields["files"], map(tuple, fields["files"].values()), strict=True))
    words = dict(zip(files, [joined.replace(" ", "\x00") for joined in fields["words"]], strict=True))
    return RecordedFiles(fields["buildId"], fields["stamp"], files, words)


def unchanged(entries: Sequence[LakeEntry], recorded: RecordedFiles | None) -> tuple[list[LakeEntry], list[LakeEntry]]:
    """(the entries whose file is exactly as recorded, every other entry), each in scan order."""
    if recorded is None:
        return [], list(entries)
    same: list[LakeEntry] = []
    other: list[LakeEntry] = []
    files = recorded.files
    for entry in entries:
        kept = not entry.is_link and entry.identity is not None and files.get(entry.relative) == entry.identity
        (same if kept else other).append(entry)
    return same, other


def take_over(root: Path, recorded: RecordedFiles, entries: Sequence[LakeEntry], seen: dict[str, LastSeen],
              stores: VerifiedStores | None = None,
              fields_read: Callable[[list[tuple[Any, ...]]], None] | None = None) -> list[Projected] | None:
    """The rows of `entries` rebuilt from the store they were recorded with; None when the store at the path is
    not that store (or cannot be verified, or lacks one of them): the caller reads them from the lake instead.
    `stores`: shared with the build's other reader of that store (`review_vectors.previous_store`), so it is
    opened and verified once. `fields_read`: called with the wanted records' stored columns (ordinal, the
    `STORED_FIELDS` values, `lead_position`), by ordinal, once they are read and before their texts are, for work
    that can start on them (`concern_ahead`).

    The texts are read TEXT_BATCH ordinals at a time and each record rendered as its texts arrive, so the old
    store's texts are never all held beside the rows rendered from them."""
    try:
        store = open_store(root, stores)
    except (ReviewStoreUnavailable, PathEscapeError):
        return None
    cursor = store.cursor()
    wanted = {entry.relative for entry in entries}
    try:
        stamp = cursor.execute("SELECT build_id, stamp FROM s.build_stamp").fetchall()
        if stamp != [(recorded.build_id, recorded.stamp)]:
            return None
        fields = [row for row in fetched_rows(cursor.execute(
            f"SELECT ordinal, {', '.join(STORED_FIELDS)}, lead_position FROM s.records ORDER BY ordinal"  # noqa: S608
        )) if row[1] in wanted]
        if len(fields) != len(wanted):
            return None
        if fields_read is not None:
            fields_read(fields)
        return _taken_over(fields, _text_groups(cursor, fields[-1][0] if fields else -1), seen, recorded.words)
    except READ_FAULTS:
        return None
    finally:
        cursor.close()


def _text_groups(cursor: duckdb.DuckDBPyConnection, last: int) -> Iterator[tuple[int, Iterator[tuple[Any, ...]]]]:
    """(ordinal, its (ordinal, channel, text) rows in position order) for each ordinal up to `last`
    holding texts, ascending, read TEXT_BATCH ordinals at a time."""
    for start in range(0, last + 1, TEXT_BATCH):
        yield from groupby(fetched_rows(cursor.execute(
            "SELECT ordinal, channel, body FROM s.texts WHERE ordinal >= ? AND ordinal < ? "
            "ORDER BY ordinal, position", [start, start + TEXT_BATCH])), itemgetter(0))


def _taken_over(fields: list[tuple[Any, ...]], groups: Iterator[tuple[int, Iterator[tuple[Any, ...]]]],
                seen: dict[str, LastSeen], words: dict[str, str]) -> list[Projected]:
    """Each wanted record (`fields`: its ordinal, `STORED_FIELDS` values and lead position, by ordinal, ascending)
    assembled with its texts and its recorded `words` (None where the file record lacks them: `assemble` then
    derives them); a record holding no text (a thread whose comments are all gone) has none."""
    rows = []
    pending = next(groups, None)
    for values in fields:
        ordinal = values[0]
        while pending is not None and pending[0] < ordinal:
            pending = next(groups, None)
        # A verified store's positions are 0, 1, ... as `assemble` numbered them: the order is all it needs.
        texts = [(channel, text) for _, channel, text in pending[1]] if pending is not None \
            and pending[0] == ordinal else []
        rows.append(assemble(values[1:-1], texts, seen.get(values[1]), words=words.get(values[1])))
    return rows
