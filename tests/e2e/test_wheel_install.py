"""The installed wheel, not the checkout, must serve: schemas ship inside it."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from serve.tools import registered_tools
from tests.support.daemon import running_daemon
from tests.support.installation import Installation
from tests.support.mcp_client import list_tools
from theurian import __version__

REPO = Path(__file__).resolve().parents[2]


def _uv() -> str:
    for candidate in (REPO / ".tools/bin/uv", shutil.which("uv")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    raise AssertionError("uv is not installed: run `make install` (make test does it)")


def _run(*args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "UV_PROJECT"))}
    env["UV_CACHE_DIR"] = str(REPO / ".tools/uv-cache")  # the checkout's cache (make install fills it), not $HOME
    env["UV_OFFLINE"] = "1"  # never the network: every wheel (hatchling's too) is in that cache after make install
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{' '.join(args)}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    work = tmp_path_factory.mktemp("wheel")
    uv = _uv()
    _run(uv, "build", "--wheel", "--out-dir", str(work / "dist"), str(REPO), cwd=work)
    wheel = next((work / "dist").glob("theurian-*.whl"))
    # The lock's own wheels by URL (pylock.toml), which the cache holds under those URLs: a requirements file of
    # bare versions would need the index's pages, which `uv sync` never fetched and offline there are none of.
    locked = work / "pylock.toml"
    _run(uv, "export", "--frozen", "--no-dev", "--no-emit-project", "--format", "pylock.toml", "--project", str(REPO),
         "-o", str(locked), cwd=work)
    _run(uv, "venv", "--python", sys.executable, str(work / "venv"), cwd=work)
    python = work / "venv/bin/python"
    _run(uv, "pip", "install", "--python", str(python), "-r", str(locked), cwd=work)
    _run(uv, "pip", "install", "--python", str(python), "--no-deps", str(wheel), cwd=work)
    _run(uv, "pip", "check", "--python", str(python), cwd=work)  # every requirement the wheel declares is met
    return wheel, work / "venv"


def test_the_wheel_ships_every_schema(installed_wheel: tuple[Path, Path]) -> None:
    wheel, _ = installed_wheel
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.startswith("schemas/")}
    for path in (REPO / "schemas").rglob("*.schema.json"):
        assert path.relative_to(REPO).as_posix() in shipped


def test_the_installed_console_script_prints_the_version(installed_wheel: tuple[Path, Path],
                                                         installation: Installation, tmp_path: Path) -> None:
    _, venv = installed_wheel
    result = subprocess.run([str(venv / "bin/theurian"), "--version"], cwd=tmp_path, env=installation.env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == f"theurian {__version__}"


def test_a_daemon_from_the_installed_wheel_lists_its_tools(installed_wheel: tuple[Path, Path],
                                                           installation: Installation, tmp_path: Path) -> None:
    _, venv = installed_wheel
    where = subprocess.run([str(venv / "bin/python"), "-c", "import schemas; print(schemas.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert Path(where.strip()).is_relative_to(venv)  # the package under test is the installed one
    with running_daemon(installation, binary=venv / "bin/theurian", cwd=tmp_path) as daemon:
        names = sorted(tool.name for tool in list_tools(daemon.mcp_url))
    assert names == sorted(tool.name for tool in registered_tools())
