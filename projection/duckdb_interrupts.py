"""Ctrl-C (and a SIGTERM taken as one) during a DuckDB statement, told as the interrupt it is.

A Ctrl-C that reaches a running statement comes back as DuckDB's own error: an InterruptException, or a
RuntimeError "Query interrupted" when DuckDB polled the handler, which a caller's error mapping would then call an
unreadable store or an unexpected failure (exit 1). Inside `interrupts_through_duckdb()` any error raised while a
Ctrl-C was noted, or DuckDB's InterruptException, is raised as the KeyboardInterrupt it stands for (exit 130, or
143 for SIGTERM): `review build` and `review export` share it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from theurian.interrupts import Interrupts, watching_interrupts


@contextmanager
def interrupts_through_duckdb() -> Iterator[Interrupts]:
    with watching_interrupts() as interrupts:
        try:
            yield interrupts
        except Exception as exc:
            if interrupts.noted or isinstance(exc, duckdb.InterruptException):
                raise KeyboardInterrupt from None
            raise
