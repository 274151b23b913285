"""`theurian setup` and `theurian uninstall`: the daemon as a user service, and each client's line."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from typing import Annotated

import typer

from theurian import access_token, client_lines, daemon_control, service_files
from theurian.cli.installation_entries import FolderContents, installation_folders, remove_theurians
from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.daemon_address import DEFAULT_PORT
from theurian.daemon_state import DaemonRecord
from theurian.durable import write_text_durably
from theurian.errors import AlreadyInPlaceError, ConfigError, TheurianError, UsageError
from theurian.service_files import Plan
from theurian.text import one_line


class _Steps:
    """What setup or uninstall does, each step printed as it happens, or kept for one `--json` summary."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.done: list[dict[str, object]] = []

    def say(self, text: str, **step: object) -> None:
        if self.as_json:
            self.done.append(step)
        else:
            typer.echo(text)


DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Print what would change; change nothing.")]
ServiceOption = Annotated[str | None, typer.Option(
    "--service", help="systemd or launchd; default: launchd on macOS, systemd elsewhere.")]


def setup(
    dry_run: DryRunOption = False,
    client: Annotated[str | None, typer.Option(
        help=f"Print the line that connects this client instead: {', '.join(client_lines.CLIENTS)}.")] = None,
    port: Annotated[int | None, typer.Option(
        help=f"Port the service listens on (default {DEFAULT_PORT}); with --client, the port to connect to "
             "(default: the running daemon's, else the default).", min=1, max=65535)] = None,
    service: ServiceOption = None,
    no_start: Annotated[bool, typer.Option(
        "--no-start", help="Write the service file; do not ask the service manager to start it.")] = False,
    as_json: JsonSummaryOption = False,
) -> None:
    """Install the daemon as a user service (systemd user unit, launchd agent) that starts at log-in.

    Prints every file it writes and every command it runs. With --client, prints instead the exact line (with
    this installation's token) that connects that client to the running daemon's address (else the default, or
    --port), says on stderr which, and changes nothing.
    """
    if client is not None:
        _client_line(client, port, as_json)
        return
    kind = _kind(service)
    plan = service_files.install_plan(kind, DEFAULT_PORT if port is None else port)
    if not dry_run:
        access_token.current_token()  # the service's first start would make it; clients need it before that
    if not no_start:  # a dry run refuses too: it prints what the real run would do, and that is this refusal
        daemon_control.refuse_if_running()  # the service's daemon would find the port taken
    steps = _Steps(as_json)
    _carry_out(plan, steps, dry_run=dry_run, run_commands=not no_start)
    if as_json:
        echo_summary({"service": kind, "dryRun": dry_run, "steps": steps.done})
        return
    if not dry_run:
        first, *others = client_lines.CLIENTS
        typer.echo(f"connect a client: `theurian setup --client {first}` (or {', '.join(others)})")


def _client_line(client: str, port: int | None, as_json: bool) -> None:
    """The line connecting `client`: to --port when given, else to the daemon running now (its own address, as
    `theurian daemon status` names it), else to the default address; stderr says which."""
    record = daemon_control.running() if port is None else None
    if record is not None:
        host = f"[{record.host}]" if ":" in record.host else record.host
        url = client_lines.client_url(client, record.port, host)
        source, note = "running-daemon", f"the address of the daemon running now (pid {record.pid})"
    elif port is not None:
        url, source, note = client_lines.client_url(client, port), "option", f"port {port}, as --port says"
    else:
        url, source = client_lines.client_url(client, DEFAULT_PORT), "default"
        note = f"the default address: no daemon is running (`theurian daemon start` serves on port {DEFAULT_PORT})"
    line = client_lines.client_config(client, url, _token_for_clients(record))
    typer.echo(f"theurian: {url} is {note}", err=True)
    if (needs := client_lines.client_note(client)) is not None:
        typer.echo(f"theurian: {needs}", err=True)
    if as_json:
        echo_summary({"client": client, "mcpUrl": url, "line": line, "addressFrom": source})
    else:
        typer.echo(line)


def _token_for_clients(record: DaemonRecord | None) -> str:
    """The token, made when there is none and no daemon runs (as the daemon's own start would make it). With a
    daemon running, an absent token file is a revocation in force (docs/daemon.md): making one here would undo it
    unasked, so that is refused with the command that does it on purpose."""
    token = access_token.existing_token()
    if token is not None:
        return token
    if record is not None or daemon_control.running() is not None:
        raise ConfigError("the access token file is absent while the daemon runs, so it accepts no token (a "
                          "deleted token is revoked): `theurian auth rotate` writes a new one, then run this again")
    return access_token.current_token()


def uninstall(
    service_only: Annotated[bool, typer.Option(
        "--service-only", help="Remove the user service only; keep the installation's files.")] = False,
    dry_run: DryRunOption = False,
    yes: Annotated[bool, typer.Option(
        "--yes", help="Confirm removing the installation's files (registry, token, build-stamp secret).")] = False,
    service: ServiceOption = None,
    as_json: JsonSummaryOption = False,
) -> None:
    """Remove the user service and, without --service-only, stop the daemon and remove Theurian's own files.

    Each folder left empty goes too; one holding anything else is kept, and said so. Projects are never touched."""
    if not service_only and not dry_run and not yes:
        raise UsageError("removing the installation deletes its registry, access token and build-stamp secret "
                         "(every store must then be rebuilt): pass --yes, or --service-only to keep them")
    kind = _kind(service)
    plan = service_files.remove_plan(kind)
    steps = _Steps(as_json)
    # The dry run takes the real run's path with `dry_run` set: each step is decided once, so the two never drift.
    if plan.path.exists():
        _carry_out(plan, steps, dry_run=dry_run, run_commands=True)
    else:
        steps.say(f"no service installed ({plan.path} does not exist)", action="none", path=str(plan.path))
    for step, contents in [] if service_only else _installation_steps():
        _take(step, contents, steps, dry_run=dry_run)
    if as_json:
        echo_summary({"service": kind, "dryRun": dry_run, "steps": steps.done})


_STOP_DAEMON = "stop daemon"
_REMOVE = "remove"
_SHOWN_NAMES = 5  # a kept folder's other files named in the line; the JSON summary lists them all


def _installation_steps() -> list[tuple[str, FolderContents | None]]:
    """What uninstall does past the service, in order: stop a running daemon (before the folders it reads and
    writes go), then remove Theurian's own files from each installation folder that exists (`installation_entries`),
    and the folder once that leaves it empty. The one list both a dry and a real run take."""
    steps: list[tuple[str, FolderContents | None]] = (
        [(_STOP_DAEMON, None)] if daemon_control.running() is not None else [])
    return steps + [(_REMOVE, contents) for contents in installation_folders()]


def _take(step: str, contents: FolderContents | None, steps: _Steps, *, dry_run: bool) -> None:
    if step == _STOP_DAEMON:
        if not dry_run:
            with contextlib.suppress(AlreadyInPlaceError):  # it exited since it was seen running: stopped all the same
                daemon_control.stop()
        steps.say("would stop the running daemon" if dry_run else "stopped the running daemon", action=step)
        return
    assert contents is not None  # a removal step always names its folder
    if not dry_run:
        remove_theurians(contents)
    folder = contents.folder
    removed, kept = ("would remove", "would keep") if dry_run else ("removed", "kept")
    if contents.others:
        text = f"{kept} {folder}: it holds files Theurian did not write ({_names(contents.others)})"
        if contents.theurians:
            text = f"{removed} Theurian's files from {folder} ({_names(contents.theurians)}); {text}"
    else:
        text = f"{removed} {folder}"
    steps.say(text, action=step, path=str(folder), removed=list(contents.theurians), kept=list(contents.others))


def _names(names: tuple[str, ...]) -> str:
    shown = ", ".join(one_line(name) for name in names[:_SHOWN_NAMES])
    return shown if len(names) <= _SHOWN_NAMES else f"{shown} and {len(names) - _SHOWN_NAMES} more"


def _kind(service: str | None) -> str:
    kind = service or service_files.default_kind()
    if kind not in service_files.SERVICE_KINDS:
        raise UsageError(f"--service {kind[:40]!r} is not one of {', '.join(service_files.SERVICE_KINDS)}")
    return kind


def _carry_out(plan: Plan, steps: _Steps, *, dry_run: bool, run_commands: bool) -> None:
    verb = "would " if dry_run else ""
    if plan.content is not None:
        steps.say(f"{verb}write {plan.path}:\n{plan.content.rstrip(chr(10))}", action="write", path=str(plan.path),
                  content=plan.content)
        if not dry_run:
            plan.path.parent.mkdir(parents=True, exist_ok=True)
            write_text_durably(plan.path, plan.content, mode=0o644)
    commands = plan.commands if run_commands else []
    if plan.content is not None:
        for command in commands:
            _run(command, steps, verb, dry_run, strict=True)
        return
    # Removing: the manager is asked first, best effort (a unit it never loaded is still a file to remove).
    for command in commands[:1]:
        _run(command, steps, verb, dry_run, strict=False)
    steps.say(f"{verb}remove {plan.path}", action="remove", path=str(plan.path))
    if not dry_run:
        plan.path.unlink(missing_ok=True)
    for command in commands[1:]:
        _run(command, steps, verb, dry_run, strict=False)


def _run(command: list[str], steps: _Steps, verb: str, dry_run: bool, *, strict: bool) -> None:
    """Run one service-manager command; `strict`: a failure stops the command line, else it is a warning."""
    shown = " ".join(command)
    steps.say(f"{verb}run: {shown}", action="run", command=command)
    if dry_run:
        return
    if shutil.which(command[0]) is None:
        problem = f"{command[0]} is not on this system"
        if strict:
            raise TheurianError(f"{problem}: run `{shown}` where it is, or pass --no-start")
        typer.echo(f"skipped: {problem}", err=True)
        return
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        problem = f"`{shown}` failed ({done.returncode}): {said[-1] if said else 'no message'}"
        if strict:
            raise TheurianError(problem)
        typer.echo(f"warning: {problem}", err=True)
