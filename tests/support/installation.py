"""Isolated installations: every test's registry, config and secret live under tmp_path, never in $HOME."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from theurian.access_token import TOKEN_NAME
from theurian.installation import HOME_OVERRIDE_ENV

THEURIAN_BIN = Path(sys.executable).parent / "theurian"


@dataclass(frozen=True)
class Installation:
    """One isolated installation: `home` holds its config and state; `env` points every process at it."""

    home: Path

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_"))}
        env[HOME_OVERRIDE_ENV] = str(self.home)
        env["XDG_CONFIG_HOME"] = str(self.home / "xdg-config")
        env["XDG_STATE_HOME"] = str(self.home / "xdg-state")
        env["HOME"] = str(self.home / "user-home")
        env["NO_COLOR"] = "1"
        env["COLUMNS"] = "200"
        return env

    @property
    def state_dir(self) -> Path:
        """The installation's state folder as its processes see it (`THEURIAN_HOME` is set in `env`)."""
        return self.home / "state"

    def token(self) -> str:
        """The installation's current MCP access token (the daemon creates it on its first start)."""
        return (self.state_dir / TOKEN_NAME).read_text(encoding="ascii").strip()

    @contextmanager
    def in_process(self) -> Iterator[None]:
        """In-process code sees this installation (its home, config and state) until the block ends: for a
        fixture's setup that a test does not examine, where a `cli(...)` run would only cost a process start."""
        with pytest.MonkeyPatch.context() as patch:
            for key in (HOME_OVERRIDE_ENV, "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
                patch.setenv(key, self.env[key])
            yield

    def cli(self, *args: str, cwd: Path | None = None, check: bool = False, timeout: float = 120,
            extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run the real `theurian` console script in this installation."""
        env = self.env | (extra_env or {})
        result = subprocess.run(
            [str(THEURIAN_BIN), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
            encoding="utf-8",
        )
        if check and result.returncode != 0:
            raise AssertionError(f"theurian {' '.join(args)} exited {result.returncode}: {result.stderr}")
        return result

    def cli_in_process(self, *args: str, cwd: Path | None = None,
                       extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """`cli(*args, check=True)` run in this process through typer's `CliRunner` over the same app: for a setup
        step a test does not examine (a registration, a build it then reads), where a child process would only add
        its start (~0.45 s CPU). The step a test checks stays a `cli(...)` run of the console script.

        The command sees exactly `env` (every other variable unset, all restored after) and `cwd`. It runs without
        the console script's own layer (`theurian.cli.main.run`: the exit-code mapping, the argument check), so a
        refusal fails the setup here with its exception rather than printing its line."""
        from tests.support.cli_app import invoke

        target = self.env | (extra_env or {})
        env: dict[str, str | None] = {key: None for key in os.environ if key not in target} | target
        with contextlib.chdir(cwd or Path.cwd()):
            result = invoke(args, env=env)
        if result.exit_code != 0:
            raise AssertionError(f"theurian {' '.join(args)} (in-process) exited {result.exit_code}: "
                                 f"{result.stderr}{result.stdout}") from result.exception
        return subprocess.CompletedProcess(["theurian", *args], 0, result.stdout, result.stderr)

    def new_project(self, root: Path, project_id: str | None = None) -> Path:
        """`theurian init` + `theurian project register` a fresh folder."""
        root.mkdir(parents=True, exist_ok=True)
        self.cli("init", str(root), check=True)
        args = ["project", "register", str(root)] + (["--id", project_id] if project_id else [])
        self.cli(*args, check=True)
        return root

    def new_project_in_process(self, root: Path, project_id: str | None = None) -> Path:
        """What `new_project` makes (an initialised folder registered in this installation, under its folder's
        default id unless `project_id`), made in-process: for a test whose subject is not `init` or `register`
        (tests/theurian/test_registry.py and test_installation_and_init.py run those through the CLI)."""
        from theurian import registry
        from theurian.project import init_project

        root.mkdir(parents=True, exist_ok=True)
        init_project(root)
        with self.in_process():
            registry.register(root, project_id or registry.default_project_id(root.resolve()))
        return root
