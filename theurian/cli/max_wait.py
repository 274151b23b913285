"""`--max-wait SECONDS` of `review ingest` and `sync`: a number of seconds from 0 to a day, parsed here so that
each way a value can be wrong is named as what it is (typer's own range check calls `nan` "not less than or equal
to 86400", which is true of no number and tells the operator nothing)."""

from __future__ import annotations

import math
from typing import Final

import typer

from ingest.retry import LONGEST_MAX_WAIT_SECONDS

MAX_WAIT_HELP: Final = f"0 to {LONGEST_MAX_WAIT_SECONDS:.0f} seconds (a day)"


def wait_seconds(value: str | float) -> float:
    """`value` as a wait in seconds (a default arrives already a float).

    Raises:
        typer.BadParameter: not a number (`nan` included), or outside 0 to LONGEST_MAX_WAIT_SECONDS (an infinite
            value included): click's usage refusal, exit 2, before the command runs.
    """
    try:
        seconds = float(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is not a number of seconds") from None
    if math.isnan(seconds):
        raise typer.BadParameter(f"{value!r} is not a number: a wait is 0 to {LONGEST_MAX_WAIT_SECONDS:.0f} "
                                 "seconds") from None
    if not 0 <= seconds <= LONGEST_MAX_WAIT_SECONDS:
        raise typer.BadParameter(f"{value} is outside 0 to {LONGEST_MAX_WAIT_SECONDS:.0f} seconds (a day)")
    return seconds
