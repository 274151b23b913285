"""The daemon's log: every record one line with a timestamp, its own and those of the libraries under it.

uvicorn's and the SDK's records (an exception in the ASGI app, a session that crashed) arrived as multi-line
tracebacks without a timestamp. An exception here becomes its type, message and innermost frame on the same line:
enough to find the fault, and a log that `grep` and a service manager can read one record per line.
"""

from __future__ import annotations

import logging
import sys
import traceback
from typing import Final

from theurian.text import one_line

# Loggers of the libraries the daemon runs on: their warnings and errors join ours, one line each.
LIBRARY_LOGGERS: Final = ("uvicorn", "mcp", "asyncio", "starlette")
TIME_FORMAT: Final = "%Y-%m-%dT%H:%M:%S%z"


class OneLineFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(message)s", TIME_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        exc_info, record.exc_info, record.exc_text = record.exc_info, None, None
        try:
            line = super().format(record)
        finally:
            record.exc_info = exc_info
        if exc_info and exc_info[1] is not None:
            line = f"{line} | {_exception_summary(exc_info[1])}"
        return one_line(line)


def _exception_summary(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


def configure_logging() -> None:
    """Our records at INFO and the libraries' at WARNING, all to standard error through OneLineFormatter."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter())
    for name, level in (("theurian", logging.INFO), *((library, logging.WARNING) for library in LIBRARY_LOGGERS)):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level)
        logger.propagate = False
