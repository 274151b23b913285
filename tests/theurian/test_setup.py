"""`theurian setup` and `theurian uninstall` through the real CLI: both service formats, by the files they write."""

from __future__ import annotations

import json
import plistlib
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.daemon import running_daemon
from tests.support.installation import THEURIAN_BIN, Installation
from theurian import service_files
from theurian.client_lines import CLIENTS, client_config, client_url
from theurian.errors import EXIT_ALREADY_IN_PLACE, EXIT_FAILED, EXIT_USAGE

UNIT = Path("xdg-config/systemd/user/theurian.service")
AGENT = Path("user-home/Library/LaunchAgents/dev.theurian.daemon.plist")
DAEMON_ARGS = ["-m", "theurian", "daemon", "start", "--foreground", "--port", "7777"]


def test_a_dry_run_prints_the_systemd_unit_and_commands_and_writes_nothing(installation: Installation) -> None:
    result = installation.cli("setup", "--dry-run", "--service", "systemd", "--port", "7777", check=True)
    unit = installation.home / UNIT
    assert f"would write {unit}:" in result.stdout
    assert "ExecStart=" + " ".join(f'"{w}"' for w in [sys.executable, *DAEMON_ARGS]) in result.stdout
    assert f'Environment="THEURIAN_HOME={installation.home}"' in result.stdout
    assert "would run: systemctl --user daemon-reload" in result.stdout
    assert "would run: systemctl --user enable --now theurian.service" in result.stdout
    assert not unit.exists() and not (installation.state_dir / "mcp-token").exists()


def test_a_relative_xdg_config_home_is_ignored_for_the_unit_as_for_every_other_file(
        installation: Installation) -> None:
    relative = {"XDG_CONFIG_HOME": "relative-config", "XDG_STATE_HOME": "relative-state"}
    result = installation.cli("setup", "--dry-run", "--service", "systemd", check=True, extra_env=relative)
    assert f"would write {installation.home / 'user-home/.config/systemd/user/theurian.service'}:" in result.stdout
    assert "XDG_CONFIG_HOME" not in result.stdout and "XDG_STATE_HOME" not in result.stdout


def test_every_path_in_the_systemd_unit_has_its_specifier_percent_escaped(tmp_path: Path) -> None:
    """`%z` in a path is a systemd specifier: the log path was written bare, so systemd read another path."""
    home = tmp_path / "a%zb"
    installation = Installation(home)
    result = installation.cli("setup", "--dry-run", "--service", "systemd", check=True)
    log = str(installation.state_dir / "daemon.log").replace("%", "%%")
    assert f"StandardOutput=append:{log}\n" in result.stdout and f"StandardError=append:{log}\n" in result.stdout
    assert f'Environment="THEURIAN_HOME={str(home).replace("%", "%%")}"' in result.stdout


def test_the_daemon_command_in_the_systemd_unit_has_its_dollar_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    """systemd substitutes `$NAME` in ExecStart= (not in Environment=): an interpreter under a folder named with
    a `$` would start another program."""
    monkeypatch.setattr(sys, "executable", "/opt/$HOME%n/bin/python")
    unit = service_files.install_plan(service_files.SYSTEMD, 7777).content
    assert unit is not None
    assert 'ExecStart="/opt/$$HOME%%n/bin/python" "-m" "theurian"' in unit


@pytest.mark.parametrize("kind", ["systemd", "launchd"])
def test_a_path_holding_a_control_character_is_refused_rather_than_written_into_a_service_file(
        tmp_path: Path, kind: str) -> None:
    """A line break ended the unit's line mid-path; launchd's plist writer failed with an internal error."""
    for name in ("a\nb", "a\x01b"):
        installation = Installation(tmp_path / name)
        result = installation.cli("setup", "--dry-run", "--service", kind)
        assert result.returncode == EXIT_FAILED, result.stderr
        shown = repr(str(tmp_path / name))
        assert result.stderr.splitlines() == [  # one line: the refusal shows the character escaped
            f"theurian: THEURIAN_HOME {shown} holds a control character, which a {kind} service file cannot "
            "hold; move the installation to a folder whose path has none"]


def test_a_dry_run_prints_the_launchd_agent_and_writes_nothing(installation: Installation) -> None:
    result = installation.cli("setup", "--dry-run", "--service", "launchd", "--port", "7777", check=True)
    agent = installation.home / AGENT
    assert f"would write {agent}:" in result.stdout and "<key>ProgramArguments</key>" in result.stdout
    assert "would run: launchctl bootstrap gui/" in result.stdout
    assert not agent.exists()


def test_setup_writes_the_systemd_unit_it_printed(installation: Installation) -> None:
    printed = installation.cli("setup", "--dry-run", "--service", "systemd", "--port", "7777", check=True).stdout
    written = installation.cli("setup", "--no-start", "--service", "systemd", "--port", "7777", check=True)
    unit = (installation.home / UNIT).read_text(encoding="utf-8")
    assert unit.rstrip("\n") in printed and f"write {installation.home / UNIT}:" in written.stdout
    assert "systemctl" not in written.stdout  # --no-start: the manager is not asked
    assert "[Install]\nWantedBy=default.target" in unit
    assert f"StandardOutput=append:{installation.state_dir / 'daemon.log'}" in unit
    assert (installation.state_dir / "mcp-token").exists()  # clients can be configured before the first start


def test_setup_writes_a_launchd_agent_that_runs_the_daemon_for_this_installation(installation: Installation) -> None:
    installation.cli("setup", "--no-start", "--service", "launchd", "--port", "7777", check=True)
    agent = plistlib.loads((installation.home / AGENT).read_bytes())
    assert agent["Label"] == "dev.theurian.daemon"
    assert agent["ProgramArguments"] == [sys.executable, *DAEMON_ARGS]
    assert agent["EnvironmentVariables"]["THEURIAN_HOME"] == str(installation.home)
    assert agent["RunAtLoad"] is True and agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["StandardErrorPath"] == str(installation.state_dir / "daemon.log")


def test_uninstall_service_only_removes_the_unit_and_keeps_the_installation(installation: Installation) -> None:
    installation.cli_in_process("setup", "--no-start", "--service", "launchd")
    token = installation.token()
    dry = installation.cli("uninstall", "--service-only", "--service", "launchd", "--dry-run", check=True)
    assert f"would remove {installation.home / AGENT}" in dry.stdout and (installation.home / AGENT).exists()
    assert "would run: launchctl bootout gui/" in dry.stdout
    # No service manager on PATH: its step is skipped, said so, and the file is still removed.
    result = installation.cli("uninstall", "--service-only", "--service", "launchd", check=True,
                              extra_env={"PATH": str(THEURIAN_BIN.parent)})
    assert not (installation.home / AGENT).exists()
    assert "skipped: launchctl is not on this system" in result.stderr
    assert installation.token() == token


def test_uninstall_of_the_whole_installation_needs_yes_and_then_removes_its_folders(
        installation: Installation) -> None:
    installation.cli_in_process("auth", "token")
    refused = installation.cli("uninstall", "--service", "systemd")
    assert refused.returncode == EXIT_USAGE and "pass --yes" in refused.stderr
    assert installation.state_dir.exists()
    done = installation.cli("uninstall", "--service", "systemd", "--yes", check=True)
    assert f"removed {installation.state_dir}" in done.stdout
    assert "no service installed" in done.stdout
    assert not installation.state_dir.exists()


def _register_a_project(installation: Installation, tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    installation.cli_in_process("init", str(tmp_path / "project"))
    installation.cli_in_process("project", "register", str(tmp_path / "project"))


def test_uninstall_removes_only_the_files_theurian_wrote_and_keeps_a_folder_that_holds_anything_else(
        installation: Installation, tmp_path: Path) -> None:
    # THEURIAN_HOME may name a folder the user already keeps other things in (docs/install.md invites it).
    _register_a_project(installation, tmp_path)  # the registry and its lock
    installation.cli_in_process("auth", "token")
    config = installation.home / "config"
    (config / "database.yml").write_text("keep\n", encoding="utf-8")
    (installation.state_dir / "notes").write_text("keep\n", encoding="utf-8")
    where = ["--service", "systemd", "--json"]
    dry = installation.cli("uninstall", "--dry-run", *where, check=True)
    real = installation.cli("uninstall", "--yes", *where, check=True)
    assert _steps(dry) == _steps(real)
    assert (config / "database.yml").read_text(encoding="utf-8") == "keep\n"
    assert (installation.state_dir / "notes").read_text(encoding="utf-8") == "keep\n"
    assert sorted(p.name for p in config.iterdir()) == ["database.yml"]
    assert sorted(p.name for p in installation.state_dir.iterdir()) == ["notes"]
    [state_step] = [step for step in _steps(real) if step.get("path") == str(installation.state_dir)]
    assert state_step["kept"] == ["notes"] and "mcp-token" in state_step["removed"]
    again = installation.cli("uninstall", "--yes", "--service", "systemd", check=True).stdout.splitlines()
    assert again[-2:] == [f"kept {config}: it holds files Theurian did not write (database.yml)",
                          f"kept {installation.state_dir}: it holds files Theurian did not write (notes)"]


def test_uninstall_removes_every_file_a_daemon_run_and_a_registration_leave_and_then_their_folders(
        installation: Installation, tmp_path: Path) -> None:
    _register_a_project(installation, tmp_path)
    with running_daemon(installation):
        pass  # the token it made, its verified-store records' folder when it read one
    # What a background daemon leaves: its log, and the one rotated at a start; a crashed write's temporary file.
    for name in ("daemon.log", "daemon.log.1", ".mcp-token.abc123", "review-verified/0123.json"):
        (installation.state_dir / name).parent.mkdir(exist_ok=True)
        (installation.state_dir / name).write_text("Theurian's\n", encoding="utf-8")
    assert (installation.home / "config" / "projects.toml").exists()
    done = installation.cli("uninstall", "--yes", "--service", "systemd", check=True)
    assert f"removed {installation.state_dir}" in done.stdout
    assert not installation.state_dir.exists() and not (installation.home / "config").exists()
    assert installation.home.exists()  # the folder THEURIAN_HOME names is the user's: only Theurian's folders go


def test_setup_client_prints_the_line_docs_clients_md_shows_with_the_token_filled_in(
        installation: Installation) -> None:
    token = installation.cli_in_process("auth", "token").stdout.strip()
    for client in CLIENTS:
        printed = installation.cli("setup", "--client", client, "--port", "7777", check=True).stdout
        assert printed.rstrip("\n") == client_config(client, client_url(client, 7777), token)
    assert installation.cli("setup", "--client", "emacs").returncode == EXIT_USAGE


def test_setup_client_codex_says_on_stderr_which_variable_codex_reads_the_token_from(
        installation: Installation) -> None:
    installation.cli_in_process("auth", "token")
    result = installation.cli("setup", "--client", "codex", "--port", "7777", check=True)
    assert "--bearer-token-env-var THEURIAN_MCP_TOKEN" in result.stdout
    assert ('theurian: codex reads the token from THEURIAN_MCP_TOKEN in the environment it starts in: add '
            '`export THEURIAN_MCP_TOKEN="$(theurian auth token)"` to your shell profile') in result.stderr.splitlines()
    claude = installation.cli("setup", "--client", "claude-code", "--port", "7777", check=True)
    assert len(claude.stderr.splitlines()) == 1  # the address line only: its line carries the token itself


def test_setup_without_its_service_manager_writes_the_unit_and_says_what_to_run(installation: Installation) -> None:
    result = installation.cli("setup", "--service", "systemd", extra_env={"PATH": str(THEURIAN_BIN.parent)})
    assert result.returncode == 1
    assert result.stderr.strip() == ("theurian: systemctl is not on this system: run `systemctl --user "
                                     "daemon-reload` where it is, or pass --no-start")
    assert (installation.home / UNIT).is_file()


def test_a_dry_run_of_setup_refuses_a_running_daemon_exactly_as_the_real_run_does(installation: Installation) -> None:
    words = ["setup", "--service", "systemd"]
    no_manager = {"PATH": str(THEURIAN_BIN.parent)}  # no systemctl: neither run may reach a service manager
    with running_daemon(installation) as daemon:
        dry = installation.cli(*words, "--dry-run", extra_env=no_manager)
        dry_json = installation.cli(*words, "--dry-run", "--json", extra_env=no_manager)
        without_start = installation.cli(*words, "--dry-run", "--no-start", extra_env=no_manager)
        real = installation.cli(*words, extra_env=no_manager)
        real_json = installation.cli(*words, "--json", extra_env=no_manager)
        assert daemon.process.poll() is None
    assert real.returncode == dry.returncode == EXIT_ALREADY_IN_PLACE and dry.stdout == real.stdout == ""
    assert dry.stderr == real.stderr and dry.stderr.startswith(
        f"theurian: a theurian daemon is already running: pid {daemon.process.pid} at ")
    assert dry_json.returncode == real_json.returncode == EXIT_ALREADY_IN_PLACE
    assert json.loads(dry_json.stdout) == json.loads(real_json.stdout)
    assert json.loads(dry_json.stdout)["ok"] is False
    # --no-start asks no service manager to start a daemon, so a running one is no obstacle, dry or real.
    assert without_start.returncode == 0 and "would run: systemctl --user enable" not in without_start.stdout
    assert not (installation.home / UNIT).exists()


def _steps(result: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    steps: list[dict[str, object]] = json.loads(result.stdout)["summary"]["steps"]
    return steps


def test_a_dry_run_of_uninstall_lists_every_step_the_real_one_takes_in_order_stopping_the_daemon_included(
        installation: Installation) -> None:
    installation.cli_in_process("setup", "--no-start", "--service", "launchd")
    config = installation.home / "config"
    config.mkdir(parents=True, exist_ok=True)
    where = ["--service", "launchd", "--json"]
    path = str(THEURIAN_BIN.parent)  # no launchctl: its steps are warnings, the files are still removed
    with running_daemon(installation) as daemon:
        dry = installation.cli("uninstall", "--dry-run", *where, check=True, extra_env={"PATH": path})
        text = installation.cli("uninstall", "--dry-run", "--service", "launchd", check=True).stdout
        assert daemon.process.poll() is None and (installation.home / AGENT).exists()
        real = installation.cli("uninstall", "--yes", *where, check=True, extra_env={"PATH": path})
        assert daemon.process.wait(timeout=30) == 0  # stopped by uninstall, gracefully
    assert _steps(dry) == _steps(real)
    actions = [step["action"] for step in _steps(real)]
    assert actions == ["run", "remove", "stop daemon", "remove", "remove"]
    assert [step.get("path") for step in _steps(real)][-2:] == [str(config), str(installation.state_dir)]
    assert text.splitlines()[-3:] == ["would stop the running daemon", f"would remove {config}",
                                      f"would remove {installation.state_dir}"]
    assert not config.exists() and not installation.state_dir.exists()


def test_a_dry_run_of_uninstall_with_nothing_installed_or_running_lists_only_what_the_real_one_does(
        installation: Installation) -> None:
    installation.cli_in_process("auth", "token")
    where = ["--service", "systemd", "--json"]
    dry = installation.cli("uninstall", "--dry-run", *where, check=True)
    real = installation.cli("uninstall", "--yes", *where, check=True)
    assert _steps(dry) == _steps(real)
    assert [step["action"] for step in _steps(real)] == ["none", "remove"]  # no service, no daemon, no config
