"""GraphQL nodes in GitHub's shape → evidence records (envelope + node, connections flattened to lists).

Pure functions: no I/O. Every string GitHub sent is kept whole; lone surrogates become U+FFFD (UTF-8 cannot
hold them). Key validation happens when the lake names a file.
"""

from __future__ import annotations

from typing import Any

from evidence.merge import with_thread_comments
from evidence.records import (
    FORMAT_VERSION,
    KIND_PULL_REQUEST,
    KIND_REVIEW_SUBMISSION,
    KIND_REVIEW_THREAD,
    PROVIDER_GITHUB,
    clean_text,
)

Node = dict[str, Any]


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _oid(obj: Node | None) -> str | None:
    return obj.get("oid") if obj else None


def _id(obj: Node | None) -> str | None:
    return obj.get("id") if obj else None


def actor(obj: Node | None) -> Node | None:
    """`{login, id, type}`, or None for a deleted account (GitHub's `author: null`)."""
    if obj is None:
        return None
    return {"login": obj.get("login", ""), "id": obj.get("id"), "type": obj.get("__typename", "Actor")}


def _envelope(kind: str, repository: str, number: int, key: str, uri: str) -> Node:
    return {
        "formatVersion": FORMAT_VERSION,
        "kind": kind,
        "provider": PROVIDER_GITHUB,
        "repository": repository,
        "recordKey": key,
        "pullRequest": number,
        "sourceUri": uri,
    }


def pull_request_record(repository: str, pr: Node, reviews: list[Node], threads: list[Node]) -> Node:
    rollup = pr.get("statusCheckRollup")
    record = _envelope(KIND_PULL_REQUEST, repository, pr["number"], pr["id"], pr["url"]) | {
        "title": pr["title"],
        "body": pr["body"],
        "state": pr["state"],
        "isDraft": pr["isDraft"],
        "author": actor(pr.get("author")),
        "authorAssociation": pr["authorAssociation"],
        "createdAt": pr["createdAt"],
        "updatedAt": pr["updatedAt"],
        "closedAt": pr.get("closedAt"),
        "merged": pr["merged"],
        "mergedAt": pr.get("mergedAt"),
        "mergedBy": actor(pr.get("mergedBy")),
        "mergeCommitOid": _oid(pr.get("mergeCommit")),
        "baseRefName": pr["baseRefName"],
        "headRefName": pr["headRefName"],
        "baseRefOid": pr.get("baseRefOid"),
        "headRefOid": pr.get("headRefOid"),
        "statusCheckRollupState": rollup.get("state") if rollup else None,
        "reviewKeys": [r["id"] for r in reviews],
        "threadKeys": [t["id"] for t in threads],
    }
    return _clean(record)  # type: ignore[no-any-return]


def review_record(repository: str, number: int, review: Node) -> Node:
    record = _envelope(KIND_REVIEW_SUBMISSION, repository, number, review["id"], review["url"]) | {
        "state": review["state"],
        "body": review["body"],
        "author": actor(review.get("author")),
        "authorAssociation": review["authorAssociation"],
        "createdAt": review["createdAt"],
        "submittedAt": review.get("submittedAt"),
        "updatedAt": review["updatedAt"],
        "lastEditedAt": review.get("lastEditedAt"),
        "commitOid": _oid(review.get("commit")),
    }
    return _clean(record)  # type: ignore[no-any-return]


def comment_entry(comment: Node) -> Node:
    review = comment.get("pullRequestReview")
    entry = {
        "recordKey": comment["id"],
        "fullDatabaseId": None if comment.get("fullDatabaseId") is None else str(comment["fullDatabaseId"]),
        "body": comment["body"],
        "author": actor(comment.get("author")),
        "authorAssociation": comment["authorAssociation"],
        "createdAt": comment["createdAt"],
        "updatedAt": comment["updatedAt"],
        "lastEditedAt": comment.get("lastEditedAt"),
        "url": comment["url"],
        "commitOid": _oid(comment.get("commit")),
        "originalCommitOid": _oid(comment.get("originalCommit")),
        "diffHunk": comment["diffHunk"],
        "replyToKey": _id(comment.get("replyTo")),
        "reviewKey": _id(review),
        "reviewState": review.get("state") if review else None,
        "isMinimized": comment["isMinimized"],
        "minimizedReason": comment.get("minimizedReason"),
        "outdated": comment["outdated"],
    }
    return _clean(entry)  # type: ignore[no-any-return]


def thread_record(repository: str, number: int, pr_url: str, thread: Node, comments: list[Node]) -> Node:
    """A thread record holding `comments` (comment entries); `evidence.merge` adds what the lake kept."""
    record = _envelope(KIND_REVIEW_THREAD, repository, number, thread["id"], pr_url) | {
        "isResolved": thread["isResolved"],
        "isOutdated": thread["isOutdated"],
        "isCollapsed": thread["isCollapsed"],
        "path": thread["path"],
        "line": thread.get("line"),
        "originalLine": thread.get("originalLine"),
        "startLine": thread.get("startLine"),
        "originalStartLine": thread.get("originalStartLine"),
        "diffSide": thread["diffSide"],
        "startDiffSide": thread.get("startDiffSide"),
        "subjectType": thread.get("subjectType"),
        "resolvedBy": actor(thread.get("resolvedBy")),
    }
    return _clean(with_thread_comments(record, comments))  # type: ignore[no-any-return]
