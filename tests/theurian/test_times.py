"""theurian.times: the one RFC 3339 parser, and the date-or-timestamp an operator types for `--since`."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ingest.errors import IngestError
from ingest.fetch import parse_time
from theurian.times import NOT_RFC3339, parse_date_or_rfc3339, parse_rfc3339


@pytest.mark.parametrize("text", ["2026-01-01", "2026-01-01T10:00:00", "2026-01-01 10:00:00Z", "20260101T100000Z"])
def test_a_time_that_is_not_a_full_timestamp_with_an_offset_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=NOT_RFC3339):
        parse_rfc3339(text)


def test_a_calendar_date_is_its_midnight_utc_and_a_timestamp_keeps_its_offset() -> None:
    assert parse_date_or_rfc3339("2026-01-01") == datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_date_or_rfc3339("2026-01-01T09:00:00+02:00") == datetime(2026, 1, 1, 7, tzinfo=UTC)
    with pytest.raises(ValueError, match=NOT_RFC3339):
        parse_date_or_rfc3339("2026-01-01T09:00:00")  # which zone it meant would be a guess


def test_the_ingest_reads_times_through_the_strict_parser_and_refuses_a_naive_one_in_one_line() -> None:
    assert parse_time("2026-01-01T00:00:00Z").tzinfo is not None
    with pytest.raises(IngestError, match=r"^the time '2026-01-01' is not an RFC 3339 timestamp"):
        parse_time("2026-01-01")
