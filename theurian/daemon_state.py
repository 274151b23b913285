"""What the installation knows about its running daemon: a record (`daemon.json`: pid, address, start time,
version) the serving process writes once it holds its port and removes when it stops, and its log file.

Both live in the installation's state folder. The record is a claim, not proof: `alive` checks the process, and
`health` asks the address, so a record left by a killed daemon is found stale rather than believed.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from theurian import installation
from theurian.daemon_address import HEALTH_PATH, MCP_PATH, url
from theurian.durable import write_text_durably
from theurian.errors import NotRegularFile
from theurian.files import read_opened

RECORD_NAME: Final = "daemon.json"
LOG_NAME: Final = "daemon.log"
ROTATED_LOG_NAME: Final = LOG_NAME + ".1"
# A background daemon's log is kept below this at each start: the previous one becomes ROTATED_LOG_NAME.
MAX_LOG_BYTES: Final = 5 * 1024 * 1024
MAX_RECORD_FILE_BYTES: Final = 64 * 1024  # the record is a few fields of JSON
HEALTH_TIMEOUT_SECONDS: Final = 2.0


@dataclass(frozen=True)
class DaemonRecord:
    pid: int
    host: str
    port: int
    startedAt: str  # noqa: N815 - the file's key, RFC 3339
    version: str

    @property
    def base_url(self) -> str:
        return url(self.host, self.port)

    @property
    def mcp_url(self) -> str:
        return url(self.host, self.port, MCP_PATH)

    def uptime_seconds(self, now: datetime | None = None) -> float:
        started = datetime.fromisoformat(self.startedAt)
        return max(0.0, ((now or datetime.now(UTC)) - started).total_seconds())


def record_path() -> Path:
    return installation.state_dir() / RECORD_NAME


def log_path() -> Path:
    return installation.state_dir() / LOG_NAME


def write_record(host: str, port: int, version: str) -> DaemonRecord:
    """Claim the installation's daemon for this process (mode 0600: it names a pid other users need not see)."""
    record = DaemonRecord(os.getpid(), host, port, datetime.now(UTC).isoformat(timespec="seconds"), version)
    path = record_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_text_durably(path, json.dumps(asdict(record), indent=2) + "\n", mode=0o600)
    return record


def read_record() -> DaemonRecord | None:
    """The record, or None when there is none or it is not one this program wrote (it is then stale anyway)."""
    try:
        # Bounded and never waited on, as every file read here: this runs for every status, start and stop.
        document = json.loads(read_opened(record_path(), MAX_RECORD_FILE_BYTES, follow_link=True))
        return DaemonRecord(int(document["pid"]), str(document["host"]), int(document["port"]),
                            str(document["startedAt"]), str(document["version"]))
    except (OSError, NotRegularFile, ValueError, KeyError, TypeError):
        return None


def remove_record(pid: int) -> None:
    """Remove the record if it still names `pid` (a daemon started since keeps its own)."""
    record = read_record()
    if record is not None and record.pid == pid:
        with contextlib.suppress(FileNotFoundError):
            record_path().unlink()


def remove_stale_record() -> None:
    with contextlib.suppress(FileNotFoundError):
        record_path().unlink()


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie, dead but not yet reaped by its parent, is not)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, and certainly not ours to signal
    return not _zombie(pid)


def looks_like_theurian(pid: int) -> bool:
    """Whether `pid` runs Theurian, where the system says (Linux's /proc); elsewhere the record is trusted."""
    if not sys.platform.startswith("linux"):
        return True
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"theurian" in command


def health(base_url: str, timeout: float = HEALTH_TIMEOUT_SECONDS) -> dict[str, Any] | None:
    """The daemon's /health answer, or None when nothing answers it as a Theurian daemon would."""
    try:
        with urllib.request.urlopen(f"{base_url}{HEALTH_PATH}", timeout=timeout) as response:  # noqa: S310 - loopback
            document = json.loads(response.read(65536))
    except (OSError, ValueError, urllib.error.URLError):
        return None
    return document if isinstance(document, dict) and document.get("status") == "ok" else None


def rotate_log_if_large() -> None:
    path = log_path()
    with contextlib.suppress(FileNotFoundError):
        if path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, path.with_name(ROTATED_LOG_NAME))


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    # The state follows the command name, which is in parentheses and may itself hold spaces or parentheses.
    return stat.rsplit(")", 1)[-1].split()[:1] == ["Z"]
