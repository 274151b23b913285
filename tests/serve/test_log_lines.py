"""Every record the daemon logs is one timestamped line, an exception's included."""

import logging
import re

from serve.log_lines import OneLineFormatter


def _record(message: str, exc_info: object = None) -> logging.LogRecord:
    return logging.LogRecord("mcp.server", logging.ERROR, __file__, 1, message, None, exc_info)  # type: ignore[arg-type]


def test_an_exception_is_its_type_message_and_innermost_frame_on_the_same_line() -> None:
    try:
        raise ConnectionResetError("peer went\naway")
    except ConnectionResetError as exc:
        line = OneLineFormatter().format(_record("Exception in ASGI application", (type(exc), exc, exc.__traceback__)))
    assert "\n" not in line
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} ERROR Exception in ASGI application \| "
                    r"ConnectionResetError: peer went\\naway \(at .*test_log_lines.py:\d+ in test_", line)


def test_a_message_with_a_line_break_stays_one_line() -> None:
    assert OneLineFormatter().format(_record("first\nsecond")).endswith("ERROR first\\nsecond")
