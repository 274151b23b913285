"""`theurian daemon logs -n N` through the real CLI, on a log of known length: the last N lines, or every line when
N is more than the log holds (a slice from before the start once printed the log's last N - length lines short)."""

from __future__ import annotations

import pytest

from tests.support.installation import Installation
from theurian.daemon_state import LOG_NAME

LOG_LINES = 61


@pytest.mark.parametrize(("args", "printed"), [
    ((), LOG_LINES),  # the default -n 100, past the log's length
    (("-n", str(LOG_LINES + 1)), LOG_LINES),
    (("-n", str(LOG_LINES)), LOG_LINES),
    (("-n", str(LOG_LINES - 1)), LOG_LINES - 1),
    (("-n", "1"), 1),
    (("-n", "0"), 0),
], ids=["default", "one-past", "exactly", "one-short", "one", "none"])
def test_logs_prints_the_last_n_lines_or_all_of_a_shorter_log(installation: Installation, args: tuple[str, ...],
                                                               printed: int) -> None:
    installation.state_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"2026-12-02T02:00:{i:02d}Z INFO line {i}" for i in range(LOG_LINES)]
    (installation.state_dir / LOG_NAME).write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = installation.cli("daemon", "logs", *args)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == (lines[-printed:] if printed else [])
