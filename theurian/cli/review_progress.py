"""Ingest progress on stderr: a redrawn bar on a terminal, one plain line per page otherwise."""

from __future__ import annotations

from typing import Any, TextIO

BAR_WIDTH = 30


class Progress:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._tty = stream.isatty()
        self._drawn = False

    def update(self, event: dict[str, Any]) -> None:
        done, total = event["pullRequests"], event["total"]
        figures = (f"{done}/{total if total is not None else '?'} pull requests, "
                   f"{event['recordsWritten']} records written, {event['points']} points")
        if not self._tty:
            self._stream.write(f"{event['repository']}: {figures}\n")
            self._stream.flush()
            return
        filled = BAR_WIDTH if not total else min(BAR_WIDTH, BAR_WIDTH * done // max(total, 1))
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        self._stream.write(f"\r{event['repository']} [{bar}] {figures}\x1b[K")
        self._stream.flush()
        self._drawn = True

    def retry(self, reason: str, wait: float) -> None:
        self.done()
        self._stream.write(f"retrying after {reason} (waiting {wait:.0f} s)\n")
        self._stream.flush()

    def waiting(self, reason: str, wait: float) -> None:
        self.done()
        self._stream.write(f"waiting {wait:.0f} s for the reset: {reason}\n")
        self._stream.flush()

    def done(self) -> None:
        if self._drawn:
            self._stream.write("\n")
            self._stream.flush()
            self._drawn = False
