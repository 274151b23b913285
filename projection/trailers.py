"""The `Review-Finding:` trailer grammar: which commit-message lines are findings, and what each one says.

A finding line starts at column 0 with `Review-Finding:`, then `<reviewer> <SEVERITY> — <finding text>`: the
prefix before the first space–em dash–space separator is exactly two tokens separated by one space, the
reviewer is one of `REVIEWERS` (or the alias `code`, stored as `code-review`), the severity one of
`SEVERITIES` (case-sensitive), and the text after the separator is kept exactly as written and must not be
empty.

A message is decoded with `surrogateescape`, so a line holding bytes that are not UTF-8 carries surrogates:
such a finding line cannot be kept byte for byte as text, and it is counted as malformed rather than
repaired.

`position` is a line's index among *all* of its commit's `Review-Finding:` lines, malformed ones included,
so a stored position always names the same line of the message however many of its neighbours were skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from theurian.text import is_utf8

TRAILER_KEY: Final = "Review-Finding:"
SEPARATOR: Final = " \u2014 "  # space, em dash (U+2014), space
REVIEWERS: Final = ("code-review", "security", "adversarial")
REVIEWER_ALIASES: Final = {"code": "code-review"}
SEVERITIES: Final = ("CRITICAL", "HIGH", "MEDIUM", "LOW")

@dataclass(frozen=True)
class Finding:
    """One well-formed finding line of one commit."""

    position: int
    reviewer: str
    severity: str
    text: str


@dataclass(frozen=True)
class CommitFindings:
    """What a commit message yields: its findings, and how many finding lines were malformed."""

    findings: tuple[Finding, ...]
    malformed: int


def parse_line(line: str) -> tuple[str, str, str] | None:
    """(reviewer, severity, text) of a finding line's body after the key, or None when it is malformed.

    `line` is the whole line, key included; the reviewer comes back canonical (`code` becomes `code-review`).
    """
    rest = line[len(TRAILER_KEY):]
    if not rest.startswith(" "):
        return None
    prefix, separator, text = rest[1:].partition(SEPARATOR)
    if not separator or not text:
        return None
    tokens = prefix.split(" ")
    if len(tokens) != 2:
        return None
    reviewer, severity = REVIEWER_ALIASES.get(tokens[0], tokens[0]), tokens[1]
    if reviewer not in REVIEWERS or severity not in SEVERITIES:
        return None
    return reviewer, severity, text


def finding_lines(message: str) -> Iterator[str]:
    """Every line of `message` that starts at column 0 with the trailer key, in message order."""
    for line in message.split("\n"):
        if line.startswith(TRAILER_KEY):
            yield line


def parse_message(message: str) -> CommitFindings:
    """The findings of one commit message, positioned among all of its `Review-Finding:` lines."""
    findings = []
    malformed = 0
    for position, line in enumerate(finding_lines(message)):
        parsed = parse_line(line) if is_utf8(line) else None
        if parsed is None:
            malformed += 1
            continue
        reviewer, severity, text = parsed
        findings.append(Finding(position, reviewer, severity, text))
    return CommitFindings(tuple(findings), malformed)


