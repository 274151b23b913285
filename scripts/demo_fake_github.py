"""Serve the bundled GitHub fixture corpus on a loopback port for `make demo`: no network, no real token.

Writes the fake's URL to the file named by the first argument, then serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.fake_github import FakeGitHub  # noqa: E402 - the checkout's own test support
from tests.support.similar_set import pull_requests  # noqa: E402

# The labelled review threads (fixtures/similar), one pull request each, for the demo's review.findSimilar answer.
LABELLED_REPOSITORY = "Acme/Reviews"

STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


def main(url_file: Path) -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # before any thread starts, so sigwait gets them
    corpus = json.loads((REPO / "fixtures/github/corpus.json").read_text(encoding="utf-8"))
    labelled, _ = pull_requests(LABELLED_REPOSITORY, 1)
    corpus["repositories"].append({"nameWithOwner": LABELLED_REPOSITORY, "isPrivate": False, "visibility": "PUBLIC",
                                   "pullRequests": labelled})
    with FakeGitHub(corpus).running() as fake:
        url_file.write_text(fake.url, encoding="utf-8")
        signal.sigwait(STOP_SIGNALS)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
