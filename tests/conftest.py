"""Shared fixtures: an isolated installation per test, and a real daemon over it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.daemon import RunningDaemon, running_daemon
from tests.support.installation import Installation
from theurian.installation import HOME_OVERRIDE_ENV


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
