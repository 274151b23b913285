"""A run asks GitHub again, by number, for every pull request `secrets = "block"` withheld, until it is stored:
beside its window, a page's worth per request, each batch durable before the list drops it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evidence.lake import Lake
from evidence.records import KIND_REVIEW_SUBMISSION
from ingest.client import GitHubClient
from ingest.errors import GitHubError
from ingest.fetch import PageSizes
from ingest.queries import BY_NUMBER_OPERATION
from ingest.run import RepositoryRun, RunOptions
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import BOB, PUBLIC_REPOSITORY, Builder, public_corpus
from tests.support.planted_secrets import PLANTED, in_prose

PLANTED_NUMBERS = list(range(30, 37))  # seven pull requests, each holding one planted token
CLEAN_NUMBERS = [1, 2]


def corpus() -> dict[str, Any]:
    b = Builder(PUBLIC_REPOSITORY, "Whd")
    pulls = [b.pull_request(number, 100 + number, title=f"Routine change {number}") for number in CLEAN_NUMBERS]
    for number, kind in zip(PLANTED_NUMBERS, sorted(PLANTED), strict=False):
        pr = b.pull_request(number, 100 + number, title=f"Deploy fix {number}")
        review = b.review(pr, "COMMENTED", BOB, 90 + number, body=in_prose(kind))  # only the review holds it
        pr["reviews"]["nodes"] = [review]
        pulls.append(pr)
    return public_corpus(PUBLIC_REPOSITORY, pulls)


class RecordingFake(FakeGitHub):
    """Records the numbers of each by-number request; fails the one at `fail_at` (0-based) with a GraphQL error
    no retry fixes, as GitHub refusing it would."""

    def __init__(self, corpus: dict[str, Any], fail_at: int | None = None) -> None:
        super().__init__(corpus)
        self.by_number: list[list[int]] = []
        self.fail_at = fail_at

    def answer(self, query: str, v: dict[str, Any]) -> tuple[dict[str, Any], int]:
        if f"query {BY_NUMBER_OPERATION}" in query:
            self.by_number.append(sorted(value for key, value in v.items() if key.startswith("number")))
            if len(self.by_number) - 1 == self.fail_at:
                return {"data": None, "errors": [{"type": "FORBIDDEN", "message": "refused for the test"}]}, 1
        return super().answer(query, v)


def configure(project: Path, secrets: str, acknowledged: list[str] | None = None) -> None:
    lines = ["[review]", f'secrets = "{secrets}"', f"acknowledged_secrets = {acknowledged or []}".replace("'", '"')]
    (project / ".theurian" / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def run(project: Path, fake: FakeGitHub, sizes: PageSizes | None = None, **options: Any) -> dict[str, Any]:
    client = GitHubClient(token="t", api_url=fake.url, max_wait=0)
    try:
        return RepositoryRun(Lake(project), client, PUBLIC_REPOSITORY, RunOptions(**options), sizes=sizes).run()
    finally:
        client.close()


def reviewed(project: Path) -> set[int]:
    """The pull requests whose (planted) review the lake holds."""
    lake = Lake(project)
    keys = lake.record_keys(PUBLIC_REPOSITORY, KIND_REVIEW_SUBMISSION)
    return {r["pullRequest"] for key in keys if (r := lake.load(PUBLIC_REPOSITORY, KIND_REVIEW_SUBMISSION, key))}


@pytest.fixture
def blocked(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A project whose first run, under block, withheld the seven planted reviews."""
    (tmp_path / ".theurian").mkdir()
    configure(tmp_path, "block")
    with FakeGitHub(corpus()).running() as fake:
        manifest = run(tmp_path, fake)
    assert [e["number"] for e in manifest["withheld"]] == PLANTED_NUMBERS
    assert reviewed(tmp_path) == set()
    return tmp_path, manifest


def test_a_run_under_block_lists_each_pull_request_it_withheld_with_what_held_it_and_no_value(
        blocked: tuple[Path, dict[str, Any]]) -> None:
    project, manifest = blocked
    entry = manifest["withheld"][0]
    assert entry["records"] == 1 and entry["firstRun"] == manifest["runId"]
    assert [f["type"] for f in entry["findings"]] == [sorted(PLANTED)[0]]
    assert not any(value in str(manifest["withheld"]) for value in PLANTED.values())


def test_once_unblocked_the_next_incremental_run_fetches_only_the_withheld_by_number_and_stores_them(
        blocked: tuple[Path, dict[str, Any]]) -> None:
    project, _ = blocked
    configure(project, "warn")
    fake = RecordingFake(corpus())
    with fake.running():
        manifest = run(project, fake)
    assert fake.by_number == [PLANTED_NUMBERS]  # one request for the seven; the window read none of them
    assert manifest["pullRequests"] == len(PLANTED_NUMBERS)  # the clean ones are not read again
    assert manifest["withheld"] == []
    assert reviewed(project) == set(PLANTED_NUMBERS)
    fake = RecordingFake(corpus())
    with fake.running():
        assert run(project, fake)["withheld"] == []
    assert fake.by_number == []  # nothing listed: no by-number request at all


def test_a_pull_request_still_blocked_stays_listed_and_is_asked_for_again_by_every_run(
        blocked: tuple[Path, dict[str, Any]]) -> None:
    project, first = blocked
    acknowledged = first["withheld"][0]["findings"][0]["fingerprint"]
    configure(project, "block", [acknowledged])
    for _ in range(2):
        fake = RecordingFake(corpus())
        with fake.running():
            manifest = run(project, fake)
        still = [e["number"] for e in manifest["withheld"]]
        assert still == PLANTED_NUMBERS[1:]
        assert {e["firstRun"] for e in manifest["withheld"]} == {first["runId"]}
    assert fake.by_number == [PLANTED_NUMBERS[1:]]  # the second run asked for the six again
    assert reviewed(project) == {PLANTED_NUMBERS[0]}


def test_a_pull_request_read_by_the_window_is_not_asked_for_again_by_number(
        blocked: tuple[Path, dict[str, Any]]) -> None:
    project, _ = blocked
    configure(project, "warn")
    fake = RecordingFake(corpus())
    with fake.running():
        manifest = run(project, fake, full=True)  # every pull request is on a page
    assert fake.by_number == []
    assert manifest["withheld"] == [] and reviewed(project) == set(PLANTED_NUMBERS)


def test_the_withheld_are_asked_for_a_page_at_a_time_and_a_failed_batch_keeps_every_number_not_yet_stored(
        blocked: tuple[Path, dict[str, Any]]) -> None:
    project, _ = blocked
    configure(project, "warn")
    fake = RecordingFake(corpus(), fail_at=1)
    with fake.running(), pytest.raises(GitHubError):
        run(project, fake, sizes=PageSizes(pull_requests=3))
    assert fake.by_number == [PLANTED_NUMBERS[:3], PLANTED_NUMBERS[3:6]]
    (failed,) = [m for m in Lake(project).manifests() if m["status"] == "failed"]
    assert [e["number"] for e in failed["withheld"]] == PLANTED_NUMBERS[3:]  # the first batch is stored
    assert reviewed(project) == set(PLANTED_NUMBERS[:3])
    fake = RecordingFake(corpus())
    with fake.running():
        manifest = run(project, fake, sizes=PageSizes(pull_requests=3))
    assert fake.by_number == [PLANTED_NUMBERS[3:6], PLANTED_NUMBERS[6:]]
    assert manifest["withheld"] == [] and reviewed(project) == set(PLANTED_NUMBERS)


def test_a_withheld_pull_request_github_no_longer_has_is_dropped_and_the_rest_of_its_batch_stored(
        blocked: tuple[Path, dict[str, Any]]) -> None:
    project, _ = blocked
    configure(project, "warn")
    served = corpus()
    gone = PLANTED_NUMBERS[2]
    pulls = served["repositories"][0]["pullRequests"]
    served["repositories"][0]["pullRequests"] = [p for p in pulls if p["number"] != gone]
    fake = RecordingFake(served)
    with fake.running():
        manifest = run(project, fake)
    # The batch fails whole on the one NOT_FOUND; each number is then asked alone.
    assert fake.by_number == [PLANTED_NUMBERS, *([n] for n in PLANTED_NUMBERS)]
    assert manifest["withheld"] == [] and manifest["status"] == "completed"
    assert reviewed(project) == set(PLANTED_NUMBERS) - {gone}
