"""The user service that keeps the daemon running: a systemd user unit (Linux) or a launchd agent (macOS).

A plan says exactly what `theurian setup` / `theurian uninstall` will change: the file written or removed and
the service manager's commands, so `--dry-run` prints the plan and the real run carries it out, step by step.
Both formats run `theurian daemon start --foreground`, so `theurian daemon status` sees the service's daemon.
"""

from __future__ import annotations

import os
import plistlib
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from theurian import daemon_state
from theurian.errors import ConfigError
from theurian.installation import HOME_OVERRIDE_ENV, xdg_base
from theurian.text import quoted

SYSTEMD: Final = "systemd"
LAUNCHD: Final = "launchd"
SERVICE_KINDS: Final = (SYSTEMD, LAUNCHD)
UNIT_NAME: Final = "theurian.service"
AGENT_LABEL: Final = "dev.theurian.daemon"
# The variables that choose the installation: the service must serve the one `setup` ran in.
_INSTALLATION_ENV: Final = (HOME_OVERRIDE_ENV, "XDG_CONFIG_HOME", "XDG_STATE_HOME")
MAX_SHOWN_PATH_CHARS: Final = 4096  # PATH_MAX: a refusal shows the operator's own path whole


@dataclass(frozen=True)
class Plan:
    path: Path
    content: str | None  # None: the file is removed
    commands: list[list[str]] = field(default_factory=list)


def default_kind() -> str:
    return LAUNCHD if sys.platform == "darwin" else SYSTEMD


def service_path(kind: str) -> Path:
    if kind == LAUNCHD:
        return Path.home() / "Library" / "LaunchAgents" / f"{AGENT_LABEL}.plist"
    return xdg_base("XDG_CONFIG_HOME", Path(".config")) / "systemd" / "user" / UNIT_NAME


def daemon_command(port: int) -> list[str]:
    """The daemon as the service manager starts it: this interpreter, so the service runs this installation."""
    return [sys.executable, "-m", "theurian", "daemon", "start", "--foreground", "--port", str(port)]


def install_plan(kind: str, port: int) -> Plan:
    path = service_path(kind)
    # A relative value is ignored by every reader (`installation.xdg_base`): the service gets the default too.
    environment = {k: os.environ[k] for k in _INSTALLATION_ENV if os.path.isabs(os.environ.get(k, ""))}
    for key, value in sorted(environment.items()):
        _refuse_a_control_character(value, key, kind)
    _refuse_a_control_character(str(daemon_state.log_path()), "the daemon's log path", kind)
    _refuse_a_control_character(sys.executable, "the Python interpreter's path", kind)
    if kind == LAUNCHD:
        return Plan(path, _launchd_agent(port, environment),
                    [["launchctl", "bootstrap", f"gui/{os.getuid()}", str(path)]])
    return Plan(path, _systemd_unit(port, environment),
                [["systemctl", "--user", "daemon-reload"], ["systemctl", "--user", "enable", "--now", UNIT_NAME]])


def remove_plan(kind: str) -> Plan:
    path = service_path(kind)
    if kind == LAUNCHD:
        return Plan(path, None, [["launchctl", "bootout", f"gui/{os.getuid()}/{AGENT_LABEL}"]])
    return Plan(path, None, [["systemctl", "--user", "disable", "--now", UNIT_NAME],
                             ["systemctl", "--user", "daemon-reload"]])


def _systemd_unit(port: int, environment: dict[str, str]) -> str:
    lines = [
        "# Written by `theurian setup`; `theurian uninstall --service-only` removes it.",
        "[Unit]",
        "Description=Theurian MCP daemon (review history and knowledge for coding agents)",
        "",
        "[Service]",
        "Type=simple",
        # `$` too: systemd substitutes `$NAME` in ExecStart= (only there).
        f"ExecStart={' '.join(_systemd_quote(word).replace('$', '$$') for word in daemon_command(port))}",
        *(f"Environment={_systemd_quote(f'{key}={value}')}" for key, value in sorted(environment.items())),
        # The log `theurian daemon logs` reads, whoever started the daemon.
        f"StandardOutput=append:{_systemd_path(daemon_state.log_path())}",
        f"StandardError=append:{_systemd_path(daemon_state.log_path())}",
        "Restart=on-failure",
        "RestartSec=5",
        # The daemon finishes in-flight calls on SIGTERM; this bounds how long systemd lets it.
        "TimeoutStopSec=15",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return "\n".join(lines)


def _systemd_quote(word: str) -> str:
    """A word as systemd reads it back: double-quoted, with backslash, quote and `%` (specifier) escaped."""
    escaped = word.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{escaped}"'


def _systemd_path(path: Path) -> str:
    """A path as `append:` reads it back: unquoted (the rest of the line is the path), `%` (specifier) escaped."""
    return str(path).replace("%", "%%")


def _refuse_a_control_character(value: str, what: str, kind: str) -> None:
    """A line break would end the unit's line mid-value, and XML holds no other control character (plistlib
    fails on one): refused before either file is printed or written."""
    if any(unicodedata.category(character) == "Cc" for character in value):
        raise ConfigError(f"{what} {quoted(value, MAX_SHOWN_PATH_CHARS)} holds a control character, which a {kind} "
                          "service file cannot hold; move the installation to a folder whose path has none")


def _launchd_agent(port: int, environment: dict[str, str]) -> str:
    log = str(daemon_state.log_path())
    agent: dict[str, object] = {
        "Label": AGENT_LABEL,
        "ProgramArguments": daemon_command(port),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},  # restarted after a crash, not after `theurian daemon stop`
        "StandardOutPath": log,
        "StandardErrorPath": log,
    }
    if environment:
        agent["EnvironmentVariables"] = environment
    return plistlib.dumps(agent, sort_keys=True).decode("utf-8")
