"""`theurian daemon start | stop | status | logs`: the daemon as a managed background process.

`theurian serve` stays the plain foreground form; `daemon start --foreground` is the same daemon, refused while
another of this installation's runs (the form a service manager starts).
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Annotated

import typer

from theurian import daemon_control, daemon_state, registry
from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.cli.serve_command import refuse_an_unreadable_registry, serve
from theurian.daemon_address import DEFAULT_HOST, DEFAULT_PORT, refuse_an_empty_host
from theurian.daemon_control import Status
from theurian.errors import UsageError

app = typer.Typer(help="Run the MCP daemon in the background and look after it.", no_args_is_help=True)

PortOption = Annotated[int, typer.Option(help="Port to listen on.", min=1, max=65535)]
HostOption = Annotated[str, typer.Option(help="Address to listen on. Keep it loopback.")]
_FOLLOW_POLL_SECONDS = 0.25


@app.command("start")
def start(
    port: PortOption = DEFAULT_PORT,
    host: HostOption = DEFAULT_HOST,
    foreground: Annotated[bool, typer.Option("--foreground", help="Serve in this terminal instead.")] = False,
    as_json: JsonSummaryOption = False,
) -> None:
    """Start the daemon in the background; returns once /health answers (exit 4 if one is already running)."""
    refuse_an_empty_host(host)
    if foreground:
        if as_json:  # it serves until Ctrl-C, which prints no summary: a script waiting for one would wait forever
            raise UsageError("--foreground serves until Ctrl-C and prints no summary: leave out --json")
        daemon_control.refuse_if_running()
        serve(host=host, port=port)  # which refuses an unreadable registry first
        return
    refuse_an_unreadable_registry()  # here, not only in the child: its stderr goes to the log, not to the operator
    record = daemon_control.start_background(host, port)
    if as_json:
        echo_summary({"pid": record.pid, "mcpUrl": record.mcp_url, "startedAt": record.startedAt,
                      "version": record.version, "log": str(daemon_state.log_path())})
        return
    typer.echo(f"theurian daemon started: pid {record.pid}, {record.mcp_url} (log: {daemon_state.log_path()})")
    typer.echo("clients send Authorization: Bearer <token>; `theurian auth token` prints it")


@app.command("stop")
def stop(
    timeout: Annotated[float, typer.Option(help="Seconds to wait for a graceful stop before killing it.",
                                           min=0.0)] = daemon_control.STOP_TIMEOUT_SECONDS,
    as_json: JsonSummaryOption = False,
) -> None:
    """Stop the daemon: in-flight calls finish; killed if still running after --timeout (exit 1 then).

    Exit 4 when no daemon is running."""
    stopped = daemon_control.stop(timeout)
    if as_json:
        echo_summary({"pid": stopped.record.pid, "seconds": round(stopped.seconds, 1),
                      "killed": stopped.killed}, ok=not stopped.killed)
    if stopped.killed:
        typer.echo(f"theurian daemon (pid {stopped.record.pid}) did not stop within {timeout:g} s: killed it "
                   "(calls in flight were cut off)", err=True)
        raise typer.Exit(1)
    if not as_json:
        typer.echo(f"theurian daemon stopped (pid {stopped.record.pid}, {stopped.seconds:.1f} s)")


@app.command("status")
def status(as_json: JsonSummaryOption = False) -> None:
    """Whether the daemon runs: pid, address, uptime, version, projects served.

    Exit 0 running and answering; 1 recorded but dead or not answering /health; 3 not running."""
    report = daemon_control.status()
    projects = [r.project_id for r in registry.read().registrations]
    if as_json:
        echo_summary(_document(report, projects), ok=report.exit_code == 0)
    else:
        _print(report, projects)
    raise typer.Exit(report.exit_code)


def _document(report: Status, projects: list[str]) -> dict[str, object]:
    record = report.record
    return {
        "state": report.state,
        "pid": record.pid if record else None,
        "url": record.mcp_url if record else None,
        "startedAt": record.startedAt if record else None,
        "uptimeSeconds": round(record.uptime_seconds()) if record and report.state == "running" else None,
        "version": (report.health or {}).get("version"),
        "projects": projects,
        "log": str(daemon_state.log_path()),
    }


def _print(report: Status, projects: list[str]) -> None:
    record = report.record
    if record is None:
        typer.echo("theurian daemon: not running (`theurian daemon start` starts it)")
        return
    cure = {"dead": f"pid {record.pid} is gone; `theurian daemon start` starts a new one",
            "not answering": f"pid {record.pid} does not answer {record.base_url}/health; see "
                             f"`theurian daemon logs`, or `theurian daemon stop` and start it again"}
    if report.state in cure:
        typer.echo(f"theurian daemon: {report.state} ({cure[report.state]})")
        return
    uptime = timedelta(seconds=round(record.uptime_seconds()))
    typer.echo(f"theurian daemon: running\n  pid       {record.pid}\n  address   {record.mcp_url}\n"
               f"  uptime    {uptime}\n  version   {(report.health or {}).get('version')}\n"
               f"  projects  {len(projects)}{': ' + ', '.join(projects) if projects else ''}\n"
               f"  log       {daemon_state.log_path()}")


@app.command("logs")
def logs(
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing new lines until Ctrl-C.")] = False,
    lines: Annotated[int, typer.Option("--lines", "-n", help="How many of the last lines to print.", min=0)] = 100,
) -> None:
    """Print the end of the daemon's log (one line per tool call, never an argument's value)."""
    path = daemon_state.log_path()
    try:
        handle = open(path, encoding="utf-8", errors="replace")
    except FileNotFoundError:
        running = daemon_control.running()
        if running is not None:  # a foreground daemon logs to its stderr (a service's is sent to the log file)
            typer.echo(f"the running daemon (pid {running.pid}) writes no log file: it serves in the foreground "
                       f"(`theurian serve`) and logs to its terminal; `theurian daemon start` writes {path}")
        else:
            typer.echo(f"no daemon log yet ({path}); `theurian daemon start` writes it")
        if not follow:
            return
        raise typer.Exit(1) from None
    with handle:
        existing = handle.read().splitlines()  # read whatever -n shows: following starts at the end
        for line in existing[-lines:] if lines else []:  # a slice from past the start is the whole log
            typer.echo(line)
        while follow:
            chunk = handle.read()
            if chunk:
                typer.echo(chunk, nl=False)
            else:
                time.sleep(_FOLLOW_POLL_SECONDS)  # following a file: there is nothing to wait on but time
