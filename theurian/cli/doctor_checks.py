"""The installation-wide checks of `theurian doctor`: Python and git, the installation's own files and their
modes, the daemon (running, reachable, accepting this installation's token), and the GitHub token."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Final, TypeVar

from theurian import access_token, daemon_control, installation, registry
from theurian.cli.project_checks import FAIL, OK, WARN, Check
from theurian.embedding import embedding_model_fault, model_cure
from theurian.errors import TheurianError
from theurian.files import others_may_read

MIN_PYTHON: Final = (3, 11)
INSTALLATION_CONFIG_CHECK: Final = "installation config"
_PRIVATE: Final = 0o600
_T = TypeVar("_T")


def installation_checks() -> list[Check]:
    secret = _private_file("build-stamp secret", installation.state_dir() / installation.SECRET_NAME,
                           "not created yet (made by the first build)", required=False)
    return [_python(), _git(), _registry(), installation_config_check(), _embedding_model(), secret, _token_file()]


def _python() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    if sys.version_info[:2] < MIN_PYTHON:
        return Check("python", FAIL, version, "install Python 3.11 or newer")
    return Check("python", OK, version)


def _git() -> Check:
    if shutil.which("git") is None:
        return Check("git", FAIL, "not found", "install git (`theurian findings build` reads the history)")
    done = subprocess.run(["git", "--version"], capture_output=True, text=True, timeout=30,
                          check=False)
    return Check("git", OK, done.stdout.strip().removeprefix("git version "))


def _registry() -> Check:
    path = installation.registry_path()
    return _readable("project registry", registry.read, lambda read: f"{len(read.registrations)} project(s) ({path})",
                     f"fix {path} by hand")


def installation_config_check() -> Check:
    """Whether the installation config can be read: every project's stores read it, so `doctor` and `project
    status` say its fault once (`project_checks.attributed_to`)."""
    return _readable(INSTALLATION_CONFIG_CHECK, installation.disclosure_ceiling,
                     lambda ceiling: f"disclosure ceiling {ceiling}", f"fix {installation.installation_config_path()}")


def _embedding_model() -> Check:
    """The model the installation config names (or the bundled one), loaded as a build loads it: a folder with no
    usable manifest or files fails here, naming the fault, rather than only as each project's review store."""
    from theurian.embedding import load_model

    fault = embedding_model_fault()
    if fault is not None:
        return Check("embedding model", FAIL, fault, model_cure())
    identity = load_model().identity
    return Check("embedding model", OK, f"{identity.name} ({identity.dimension} dimensions)")


def _readable(name: str, read: Callable[[], _T], shown: Callable[[_T], str], cure: str) -> Check:
    """OK with what `read` returned, shown; FAIL with the one-line reason it could not, and `cure`."""
    try:
        value = read()
    except TheurianError as exc:
        return Check(name, FAIL, exc.message, cure)
    return Check(name, OK, shown(value))


def _private_file(name: str, path: Path, absent: str, *, required: bool) -> Check:
    try:
        mode = others_may_read(path)
    except FileNotFoundError:
        return Check(name, FAIL if required else OK, absent)
    if mode is not None:
        return Check(name, FAIL, f"{path} is mode {mode:o}: others can read it", f"`chmod 600 {path}`")
    return Check(name, OK, f"{path} (mode {_PRIVATE:o})")


def _token_file() -> Check:
    check = _private_file("access token", access_token.token_path(),
                          "absent: never made, or deleted (which revokes it; no client is accepted meanwhile)",
                          required=True)
    if check.level != OK:
        return Check(check.name, check.level, check.state, check.cure or "`theurian auth token`")
    try:
        access_token.existing_token()  # read only: doctor never makes a token (a deleted one is a revocation)
    except TheurianError as exc:
        return Check("access token", FAIL, exc.message, "`theurian auth rotate`")
    return check


def daemon_checks() -> list[Check]:
    report = daemon_control.status()
    record = report.record
    if report.state == "stopped" or record is None:
        return [Check("daemon", FAIL, "not running", "`theurian daemon start` (or `theurian setup`)")]
    if report.state == "dead":
        return [Check("daemon", FAIL, f"recorded pid {record.pid} is gone", "`theurian daemon start`")]
    if report.state != "running":
        return [Check("daemon", FAIL, f"pid {record.pid} does not answer {record.base_url}/health",
                      "`theurian daemon logs`; then `theurian daemon stop` and `theurian daemon start`")]
    version = (report.health or {}).get("version")
    running = Check("daemon", OK, f"pid {record.pid} at {record.mcp_url}, version {version}")
    return [running, _token_accepted(record.mcp_url)]


def _token_accepted(url: str) -> Check:
    try:
        token = access_token.existing_token()
    except TheurianError as exc:
        return Check("daemon accepts the token", FAIL, exc.message, "`theurian auth rotate`")
    if token is None:  # removed while the daemon serves, or never made: the daemon accepts no token now
        return Check("daemon accepts the token", FAIL, "no token: the token file is absent, so every client is refused",
                     "`theurian auth rotate` writes a new one (then give it to every client)")
    # A notification runs nothing: any answer but 401 (the SDK's own 202 or 400) means the guard admitted it.
    request = urllib.request.Request(url, method="POST",  # noqa: S310 - the daemon's own loopback URL data=b'{"jsonrpc": "2.0", "method": "notifications/x"}',
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                                              "Accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - the daemon's loopback URL
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    except OSError as exc:
        return Check("daemon accepts the token", FAIL, f"no answer ({exc})", "`theurian daemon logs`")
    if status == 401:
        return Check("daemon accepts the token", FAIL, "refused (401)",
                     "the daemon serves another installation: stop it, then `theurian daemon start` here")
    return Check("daemon accepts the token", OK, "yes")


def github_checks(online: bool) -> list[Check]:
    """Which auth the ingest would use — the GitHub App the installation config names, else a token — checked
    offline (the key file read and checked), and with `online` tried against the API."""
    from ingest.credentials import TOKEN_ENVS, app_installation

    name = next((n for n in TOKEN_ENVS if os.environ.get(n, "").strip()), None)
    try:
        app = app_installation()
    except TheurianError as exc:
        cure = f"fix [github_app] in {installation.installation_config_path()}, or its key file"
        return [Check("github app", FAIL, exc.message, cure)]
    if app is not None:
        unused = f"; {name} is set and not used" if name else ""
        checks = [Check("github app", OK, f"signs in as {app.describe()}{unused}")]
    elif name is None:
        level = FAIL if online else WARN
        return [Check("github token", level, f"neither {' nor '.join(TOKEN_ENVS)} is set",
                      "export GITHUB_TOKEN=<a token> (needed by `theurian review ingest` only)")]
    else:
        checks = [Check("github token", OK, f"{name} is set (not shown)")]
    return [*checks, _github_online()] if online else checks


def _github_online() -> Check:
    from ingest.api_url import API_URL_ENV, api_url_from
    from ingest.client import GitHubClient
    from ingest.credentials import credentials_from

    try:
        url = api_url_from(None, os.environ)
    except TheurianError as exc:  # refused before any request: the URL is the fault, not the token
        return Check("github api", FAIL, exc.message, f"set {API_URL_ENV} to an https:// URL (GitHub Enterprise: "
                                                      "https://HOST/api/v3), or unset it for https://api.github.com")
    try:
        client = GitHubClient(token=credentials_from(os.environ), api_url=url, max_wait=0)
        try:
            data = client.graphql("query RateLimit { rateLimit { remaining resetAt } }", {})
        finally:
            client.close()
    except TheurianError as exc:
        return Check("github api", FAIL, exc.message, "check the token or the app, and GITHUB_API_URL")
    budget = data.get("rateLimit") or {}
    return Check("github api", OK, f"{url} answers; {budget.get('remaining')} points left until "
                                   f"{budget.get('resetAt')}")
