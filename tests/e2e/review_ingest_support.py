"""Shared helpers for the end-to-end ingest tests: run the real CLI against the loopback fake."""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ingest import allowlist
from projection.review_store import STORE_RELATIVE
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import public_corpus
from tests.support.installation import Installation
from theurian.project import init_project

TOKEN = "ghp_e2eSECRETtokenValue0123456789"


def ingest_env(fake: FakeGitHub) -> dict[str, str]:
    return {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": fake.url}


def ingest(installation: Installation, project: Path, fake: FakeGitHub,
           *args: str) -> subprocess.CompletedProcess[str]:
    # --max-wait 0: the fake's rate limits ask for no wait, and backoff never sleeps in a test.
    return installation.cli("review", "ingest", *args, "--max-wait", "0", "--project", str(project),
                            extra_env=ingest_env(fake))


def ingested_and_built(installation: Installation, root: Path, repository: str,
                       pulls: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    """`pulls` of public `repository` ingested into the project at `root` (allowing it) from a fake GitHub, then
    `theurian review build`, both through the console script; the build's run."""
    new_project(installation, root, repository)
    with FakeGitHub(public_corpus(repository, pulls)).running() as fake:
        assert ingest(installation, root, fake).returncode == 0
    return installation.cli("review", "build", "--project", str(root), check=True)


def new_project(installation: Installation, root: Path, *allowed: str) -> Path:
    """A project folder with `allowed` on its allowlist, made in-process with the functions `theurian init` and
    `theurian review allow` call (a process start each saved; tests/e2e/test_review_allow.py runs those commands).
    Nothing here touches the installation: a project's folder is the installation's only through a registration."""
    root.mkdir(parents=True, exist_ok=True)
    init_project(root)
    for repository in allowed:
        allowlist.allow(root, allowlist.parse_repository(repository))
    return root


def copy_project(template: Path, root: Path) -> Path:
    """A byte-identical copy of a project (perhaps ingested through the real CLI): cheaper than making it
    again, and nothing in a project refers to its own path or to the installation that made it."""
    shutil.copytree(template, root, symlinks=True)
    return root


def registered_with_a_damaged_store(installation: Installation, template: Path, root: Path, project_id: str) -> Path:
    """A copy of the built project `template` at `root` whose review store is not a DuckDB file, registered as
    `project_id`: what a tool and its CLI command must both refuse with the tool's own text."""
    copy_project(template, root)
    (root / STORE_RELATIVE).write_bytes(b"not a DuckDB database")
    installation.cli("project", "register", str(root), "--id", project_id, check=True)
    return root


def small_corpus(corpus: dict[str, Any]) -> dict[str, Any]:
    """The public repository cut to pull requests 1, 2, 4, 5, 6 and 7 (no 130-thread one); private kept."""
    public, private = copy.deepcopy(corpus["repositories"])
    public["pullRequests"] = [p for p in public["pullRequests"] if p["number"] in {1, 2, 4, 5, 6, 7}]
    return {"repositories": [public, private]}


def record_files(project: Path) -> dict[str, bytes]:
    """Every record file of the lake (not run manifests) by its path under .theurian/review."""
    review = project / ".theurian" / "review"
    return {str(p.relative_to(review)): p.read_bytes() for p in sorted(review.glob("sha256-*/*/*.json"))}
