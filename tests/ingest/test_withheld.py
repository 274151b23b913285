"""The withheld list: which run's list a run starts from, changes taken only once their page is durable, and the
words status and the summary print."""

from __future__ import annotations

from typing import Any

from ingest.withheld import NUMBERS_SHOWN, WithheldList, carried, withheld_words

RUN_1, RUN_2 = "01JAAAAAAAAAAAAAAAAAAAAAAA", "01JBBBBBBBBBBBBBBBBBBBBBBB"


def blocked_entry(*findings: tuple[str, str]) -> dict[str, Any]:
    """The gate's entry for one blocked record holding `findings` (type, fingerprint)."""
    return {"kind": "review-submission", "recordKey": "PRR_x", "recordPath": "p", "action": "blocked",
            "fields": [{"field": "body", "type": t, "fingerprint": f} for t, f in findings]}


def entry(number: int, first_run: str = RUN_1) -> dict[str, Any]:
    return {"number": number, "firstRun": first_run, "records": 1,
            "findings": [{"type": "github-token", "fingerprint": "0" * 16}]}


def test_a_run_starts_from_the_newest_list_even_when_a_newer_run_from_before_the_list_carries_none() -> None:
    runs = [{"runId": "a", "withheld": [entry(1)]}, {"runId": "b", "withheld": [entry(2)]}, {"runId": "legacy"}]
    assert [e["number"] for e in carried(runs)] == [2]
    assert carried([{"runId": "legacy"}]) == []
    assert carried([{"runId": "a", "withheld": [entry(1)]}, {"runId": "b", "withheld": []}]) == []


def test_a_change_is_taken_into_the_list_only_when_its_page_is_committed() -> None:
    listed = WithheldList([entry(5), entry(7)], RUN_2)
    listed.stored(5, [])
    listed.stored(9, [blocked_entry(("aws-access-key", "1" * 16))])
    assert listed.numbers() == [5, 7]  # the page in flight is not durable yet
    listed.commit()
    assert listed.numbers() == [7, 9]
    assert listed.entries()[1] == {"number": 9, "firstRun": RUN_2, "records": 1,
                                   "findings": [{"type": "aws-access-key", "fingerprint": "1" * 16}]}


def test_one_still_blocked_keeps_the_run_that_first_withheld_it_and_names_what_blocks_it_now() -> None:
    listed = WithheldList([entry(5)], RUN_2)
    twice = ("slack-token", "2" * 16)
    listed.stored(5, [blocked_entry(twice, twice), blocked_entry(("aws-access-key", "3" * 16))])
    listed.commit()
    (kept,) = listed.entries()
    assert kept["firstRun"] == RUN_1 and kept["records"] == 2
    assert kept["findings"] == [{"type": "aws-access-key", "fingerprint": "3" * 16},
                                {"type": "slack-token", "fingerprint": "2" * 16}]


def test_a_pull_request_github_no_longer_has_leaves_the_list() -> None:
    listed = WithheldList([entry(5)], RUN_2)
    listed.gone(5)
    listed.commit()
    assert listed.entries() == []


def test_the_words_name_every_number_up_to_the_bound_and_count_the_rest() -> None:
    at_bound = withheld_words([entry(n) for n in range(1, NUMBERS_SHOWN + 1)])
    assert f"#{NUMBERS_SHOWN})" not in at_bound and f"#{NUMBERS_SHOWN};" in at_bound and "more" not in at_bound
    past = withheld_words([entry(n) for n in range(1, NUMBERS_SHOWN + 2)])
    assert f"#{NUMBERS_SHOWN + 1}" not in past and "and 1 more;" in past
    assert past.startswith(f'{NUMBERS_SHOWN + 1} pull requests withheld by secrets = "block" (#1, #2,')
    assert past.endswith(f"{NUMBERS_SHOWN + 1} records kept out; secrets by type: github-token {NUMBERS_SHOWN + 1}); "
                         "the next ingest fetches them again")
    assert withheld_words([]) == ""
