"""What a knowledge candidate's proposal records: the source anchors of the threads it came from, and the
evidence trail (`evidence.json`) a human reviewer reads — every thread (for a concern, every member) with its record
path, record key, content hash and each gate signal with how it was computed."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from knowledge.promotion_gate import Signal
from knowledge.stored_thread import StoredRecordValue, StoredThreadValue


def thread_anchor(thread: Mapping[str, Any]) -> dict[str, Any]:
    """The thread as a source anchor: its URL, repository, file, lines, and the commit it was left on."""
    anchor: dict[str, Any] = {"provider": thread["provider"], "sourceUri": thread["sourceUri"],
                              "repository": thread["repository"], "filePath": thread["path"]}
    comments = thread["comments"]
    commit = comments[0].get("originalCommitOid") if comments else None
    if isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{4,64}", commit):
        anchor["commitSha"] = commit
    end = thread.get("originalLine") or thread.get("line")
    start = thread.get("originalStartLine") or thread.get("startLine") or end
    if isinstance(start, int) and isinstance(end, int) and 1 <= start <= end:
        anchor["lineStart"], anchor["lineEnd"] = start, end
    return anchor


def thread_entry(stored: StoredThreadValue) -> dict[str, Any]:
    """One thread (or review submission) of the trail: where it is stored and the hash the store vouched for."""
    record = stored.thread.record
    entry: dict[str, Any] = {
        "repository": record["repository"], "recordKey": record["recordKey"],
        "recordPath": stored.thread.record_path, "contentHash": stored.thread.content_hash,
        "pullRequest": record["pullRequest"], "sourceUri": record["sourceUri"],
    }
    if record["kind"] == "review-thread":
        entry |= {"filePath": record["path"], "state": record["state"]}
    else:
        entry["kind"] = record["kind"]
    return entry


def pull_entry(pull: StoredRecordValue | None) -> dict[str, Any] | None:
    if pull is None:
        return None
    return {"recordKey": pull.record["recordKey"], "recordPath": pull.record_path, "contentHash": pull.content_hash}


def member_entry(stored: StoredThreadValue, signals: Sequence[Signal] | None) -> dict[str, Any]:
    """A concern member in the trail: the thread, its pull request and its stored signals (none for a review
    submission, which is not a thread and never the gate's)."""
    return {"thread": thread_entry(stored), "pullRequest": pull_entry(stored.pull_request),
            "signals": None if signals is None else {s.name: s.as_evidence() for s in signals}}
