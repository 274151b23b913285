"""The promotion gate a review thread must pass to become a knowledge candidate.

Five signals are recomputed from the stored records (never taken from the caller), one is verified against the
project's git history (`fixCommitPresent`, in `knowledge.git_verify`), and one is claimed by offering a
generalization at all (`generalizable`). Each signal carries an outcome and the sentence saying how it was
computed from which record, so the refusal and `evidence.json` tell the same story.

An outcome is `met`, `failed` or `unknown`. Only CI can be unknown (no checks, or checks still PENDING/EXPECTED,
or no stored pull request to read them from): "go and get a CI result" and "this thread is not a candidate" are
different instructions, so the refusal keeps them apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from evidence.records import THREAD_DISMISSED, THREAD_OUTDATED, THREAD_RESOLVED

MET: Final = "met"
FAILED: Final = "failed"
UNKNOWN: Final = "unknown"

PULL_REQUEST_MERGED: Final = "pullRequestMerged"
THREAD_RESOLVED_SIGNAL: Final = "threadResolved"
NOT_DISMISSED_OR_OUTDATED: Final = "notDismissedOrOutdated"
CI_SUCCESSFUL: Final = "ciSuccessful"
HAS_EVIDENCE: Final = "hasEvidence"
FIX_COMMIT_PRESENT: Final = "fixCommitPresent"
GENERALIZABLE: Final = "generalizable"
STORED_SIGNALS: Final = (PULL_REQUEST_MERGED, THREAD_RESOLVED_SIGNAL, NOT_DISMISSED_OR_OUTDATED, CI_SUCCESSFUL,
                         HAS_EVIDENCE)

CI_MET: Final = ("SUCCESS",)
CI_FAILED: Final = ("FAILURE", "ERROR")  # absent, PENDING and EXPECTED are unknown


@dataclass(frozen=True)
class Signal:
    name: str
    outcome: str  # met | failed | unknown
    computed_from: str  # the record (project-relative path) or source the outcome was read from
    how: str  # one sentence: what was read and what it said

    def as_evidence(self) -> dict[str, str]:
        return {"outcome": self.outcome, "computedFrom": self.computed_from, "how": self.how}


def stored_signals(thread: Mapping[str, Any], thread_path: str, pull_request: Mapping[str, Any] | None,
                   pull_request_path: str | None) -> list[Signal]:
    """The five signals recomputed from the stored thread and its pull request (None when none is stored)."""
    state = thread["state"]
    comments: Sequence[Any] = thread["comments"]
    number = thread["pullRequest"]
    return [
        _merged(pull_request, pull_request_path, number),
        Signal(THREAD_RESOLVED_SIGNAL, MET if state == THREAD_RESOLVED else FAILED, thread_path,
               f"the stored thread's state is `{state}` (met only when it is `resolved`)"),
        Signal(NOT_DISMISSED_OR_OUTDATED, FAILED if state in (THREAD_DISMISSED, THREAD_OUTDATED) else MET,
               thread_path, f"the stored thread's state is `{state}` (failed when `dismissed` or `outdated`)"),
        _ci(pull_request, pull_request_path, number),
        Signal(HAS_EVIDENCE, MET if comments else FAILED, thread_path,
               f"the stored thread holds {len(comments)} comment(s) (met with at least one)"),
    ]


def generalizable() -> Signal:
    return Signal(GENERALIZABLE, MET, "the call",
                  "claimed by offering a generalization (itemId, title, body, kind, category); whether it is a "
                  "fair reading of the thread is the human reviewer's")


def unmet_message(unmet: Sequence[Signal]) -> str:
    """The gate refusal: every unmet signal, why its record makes it so, and what to do about it."""
    lines = [f"{signal.name} is {signal.outcome}: {signal.how} ({signal.computed_from})." for signal in unmet]
    if all(signal.outcome == UNKNOWN for signal in unmet):
        advice = (
            "The CI outcome is unknown, not failed: go and get a CI result (let the checks finish, then run "
            "`theurian review ingest` and `theurian review build` again) and call again."
        )
    else:
        advice = "This thread is not a candidate while a signal has failed."
        if any(signal.outcome == UNKNOWN for signal in unmet):
            advice += " (The CI outcome is also unknown, not failed.)"
    return (
        "PROMOTION_GATE_UNMET: review.generateKnowledgeCandidate recomputed the promotion gate from the stored "
        f"records and it is not met, so nothing was drafted. {' '.join(lines)} {advice}"
    )


def _merged(pull_request: Mapping[str, Any] | None, path: str | None, number: int) -> Signal:
    if pull_request is None or path is None:
        return Signal(PULL_REQUEST_MERGED, FAILED, "the review store",
                      f"no pull-request record for #{number} is stored, so nothing shows it merged")
    merged = pull_request["merged"] is True
    return Signal(PULL_REQUEST_MERGED, MET if merged else FAILED, path,
                  f"the stored pull request #{number} has merged: {str(merged).lower()} "
                  f"(state `{pull_request['state']}`)")


def _ci(pull_request: Mapping[str, Any] | None, path: str | None, number: int) -> Signal:
    if pull_request is None or path is None:
        return Signal(CI_SUCCESSFUL, UNKNOWN, "the review store",
                      f"no pull-request record for #{number} is stored, so no status-check rollup can be read")
    rollup = pull_request["statusCheckRollupState"]
    if rollup in CI_MET:
        outcome = MET
    elif rollup in CI_FAILED:
        outcome = FAILED
    else:
        outcome = UNKNOWN
    shown = "absent (no checks)" if rollup is None else f"`{rollup}`"
    return Signal(CI_SUCCESSFUL, outcome, path,
                  f"the stored pull request #{number}'s status-check rollup is {shown} (SUCCESS is met; FAILURE "
                  "or ERROR failed; absent, PENDING or EXPECTED unknown)")
