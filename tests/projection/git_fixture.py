"""Real git repositories for tests: a whole history written by one `git fast-import`."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

T0 = 1_788_000_000  # 2026-08-29T10:40:00Z
EM = "\u2014"


@dataclass(frozen=True)
class Planned:
    """One commit to write: committer time (epoch seconds) and the whole message."""

    when: int
    message: str


def git(root: Path, *args: str, stdin: bytes | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env |= {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    completed = subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-C", str(root), *args],
        input=stdin, capture_output=True, env=env, check=True, timeout=300,
    )
    return completed.stdout.decode("utf-8")


def write_history(root: Path, commits: Iterable[Planned]) -> list[str]:
    """`git init` `root` and write `commits` (oldest first) on `main`; returns their shas, oldest first."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "--quiet", "--initial-branch=main")
    stream = bytearray()
    for index, planned in enumerate(commits, start=1):
        data = planned.message.encode("utf-8", "surrogateescape")
        stream += f"commit refs/heads/main\nmark :{index}\n".encode()
        stream += f"committer Test <test@example.invalid> {planned.when} +0000\n".encode()
        stream += f"data {len(data)}\n".encode() + data + b"\n"
    git(root, "fast-import", "--quiet", stdin=bytes(stream))
    if not stream:
        return []
    return list(reversed(git(root, "rev-list", "main").split()))


def trailer(reviewer: str, severity: str, text: str) -> str:
    return f"Review-Finding: {reviewer} {severity} {EM} {text}"


def message(subject: str, lines: Sequence[str]) -> str:
    return subject + "\n\n" + "\n".join(lines) + "\n"


LONG_TEXT = "L" * 4990 + "0123456789"  # 5,000 characters; the tail marks where the cut must fall
STANDARD_HISTORY = (
    Planned(T0, "initial commit without findings\n"),
    Planned(T0 + 100, message("three findings and one malformed line", [
        trailer("security", "HIGH", "Token logged in Plain text"),
        "Review-Finding: security HIGH - hyphen instead of an em dash",
        trailer("code", "LOW", "alias code is stored as code-review"),
        "  Review-Finding: adversarial LOW \u2014 indented, so not a trailer line at all",
        trailer("adversarial", "CRITICAL", "byte-identical body accepted under a second item id  "),
    ])),
    Planned(T0 + 200, message("same second, first", [trailer("security", "LOW", "same second A")])),
    Planned(T0 + 200, message("same second, second", [trailer("adversarial", "MEDIUM", "same second B")])),
    Planned(T0 + 300, message("a long finding", [
        trailer("code-review", "CRITICAL", LONG_TEXT),
        trailer("code-review", "MEDIUM", "progress 100%_done, not 100 percent"),
    ])),
    Planned(T0 + 400, message("four malformed lines", [
        "Review-Finding: security high \u2014 lowercase severity",
        "Review-Finding: perf HIGH \u2014 unknown reviewer",
        "Review-Finding: security HIGH \u2014 ",
        "Review-Finding: security HIGH extra \u2014 three tokens",
    ])),
)
STANDARD_MALFORMED = 5
STANDARD_FINDINGS = 7
