"""The lines an ingest prints on stderr besides its progress: a retry, and a wait for the rate budget."""

import io

from theurian.cli.review_progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_wait_for_the_rate_budget_ends_the_bar_line_and_says_how_long_and_why() -> None:
    stream = Terminal()
    progress = Progress(stream)
    progress.update({"repository": "Acme/Widgets", "pullRequests": 3, "total": 9, "recordsWritten": 7,
                     "points": 2})
    progress.waiting("GitHub rate budget is down to 10 points", 3500.4)
    assert stream.getvalue().endswith("\x1b[K\nwaiting 3500 s for the reset: GitHub rate budget is down to 10 points\n")
