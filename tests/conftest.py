"""Shared fixtures: an isolated installation per test, and a real daemon over it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import xdist_units
from tests.support.daemon import RunningDaemon, running_daemon
from tests.support.installation import Installation
from theurian.installation import HOME_OVERRIDE_ENV

REPO = Path(__file__).resolve().parents[1]
# Where compiled modules go when the environment says PYTHONDONTWRITEBYTECODE: out of the source tree and the
# venv (which that setting keeps clean), in pytest's own cache folder (git-ignored), kept from one run to the next.
BYTECODE_FOLDER = REPO / ".pytest_cache" / "bytecode"


def _cache_bytecode_outside_the_tree() -> None:
    """Under PYTHONDONTWRITEBYTECODE no process keeps what it compiled, so every `theurian` command, daemon and
    racer a test starts compiled every module it imports afresh (typer, mcp, duckdb's Python half...): about half
    of a command's start-up CPU, thousands of times a run. An installed tool has its bytecode (pip compiles it at
    install, Python writes it on a first import), so the tests' processes get theirs too: written under
    BYTECODE_FOLDER (`PYTHONPYCACHEPREFIX`), read back by every later process, pytest-xdist's workers included
    (they start from this process's environment, after this conftest loads). Python checks each cached file
    against its source's mtime and size, so an edited module is compiled again."""
    if not sys.flags.dont_write_bytecode or os.environ.get("PYTHONPYCACHEPREFIX"):
        return  # bytecode is written where Python writes it, or where the caller chose
    BYTECODE_FOLDER.mkdir(parents=True, exist_ok=True)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(BYTECODE_FOLDER)
    sys.pycache_prefix = str(BYTECODE_FOLDER)  # this process's own later imports (the test modules) too
    sys.dont_write_bytecode = False


_cache_bytecode_outside_the_tree()


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent under `-p no:xdist`
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """`--dist loadfile` over tests/support/xdist_units' work units (the modules sharing the demo build as one)."""
    return xdist_units.scheduler(config, log)


@pytest.fixture(autouse=True, scope="session")
def isolated_session_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """What a fixture wider than one test sees: an installation of the session's own, never the real home (a
    module-scoped build reads the build-stamp secret). Each test then gets its own (`isolated_home`), so a store
    a wider fixture built is another installation's to it, as a store copied in would be."""
    home = tmp_path_factory.mktemp("session-installation")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(HOME_OVERRIDE_ENV, str(home))
        patch.setenv("XDG_CONFIG_HOME", str(home / "xdg-config"))
        patch.setenv("XDG_STATE_HOME", str(home / "xdg-state"))
        yield


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Installation:
    """Every test, in-process or not, sees an installation under tmp_path and no GitHub credentials."""
    installation = Installation(tmp_path / "installation")
    for key in list(os.environ):
        if key.startswith(("GITHUB_", "GH_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv(HOME_OVERRIDE_ENV, str(installation.home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(installation.home / "xdg-config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(installation.home / "xdg-state"))
    return installation


@pytest.fixture
def installation(isolated_home: Installation) -> Installation:
    return isolated_home


@pytest.fixture
def daemon(installation: Installation) -> Iterator[RunningDaemon]:
    with running_daemon(installation) as running:
        yield running


@pytest.fixture(scope="module")
def module_installation(tmp_path_factory: pytest.TempPathFactory) -> Installation:
    """An installation shared by one test module (for a shared daemon). In-process code in a test still sees
    the per-test `isolated_home`; talk to this one through `module_installation.cli(...)` and its daemon."""
    return Installation(tmp_path_factory.mktemp("module-installation"))


@pytest.fixture(scope="module")
def module_daemon(module_installation: Installation) -> Iterator[RunningDaemon]:
    with running_daemon(module_installation) as running:
        yield running
