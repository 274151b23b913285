"""Shared helpers for the end-to-end ingest tests: run the real CLI against the loopback fake, over the corpus
with planted credentials (`planted_small_corpus`) and a salted project to copy (`salted_template`) that the safe
content and withheld modules each take as their `corpus` and `template` fixtures."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from evidence.content_policy import project_salt
from ingest import allowlist
from projection.review_store import STORE_RELATIVE
from tests.support.fake_github import FakeGitHub
from tests.support.github_corpus import BOB, PUBLIC_REPOSITORY, Builder, load_fixture, public_corpus
from tests.support.installation import Installation
from tests.support.planted_secrets import PLANTED, in_prose
from theurian.project import init_project

TOKEN = "ghp_e2eSECRETtokenValue0123456789"
# The planted corpus (`planted_corpus`): one pull request per credential family from FIRST_PLANTED on, then one
# whose comment splits a token across a line break and hides characters.
FIRST_PLANTED = 200
KINDS = sorted(PLANTED)
SPLIT = "ghp_" + "Zx8Wv7Ut6Sr5Qp4On3Ml2Kj1Ih0Gf9Ed8Cb7A"
HIDDEN_PR = FIRST_PLANTED + len(KINDS)
HIDDEN_TEXT = "admin\u202euser lo\u200bck ok\U000e0049 re\u00adad"
# Every fragment of a planted credential that must appear nowhere: each value, each line of the private key,
# and both halves of the token a line break splits.
NEEDLES = sorted({*PLANTED.values(), *PLANTED["private-key"].splitlines()[1:-1], SPLIT[:20], SPLIT[20:]})


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
    installation.cli_in_process("project", "register", str(root), "--id", project_id)
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


def planted_corpus(base: dict[str, Any]) -> dict[str, Any]:
    """`base` plus one pull request per family, the credential in its title, body, a review body, a comment body
    and the comment's diff hunk; and one whose comment splits a token across a line break and hides characters."""
    corpus = json.loads(json.dumps(base))
    pulls = corpus["repositories"][0]["pullRequests"]
    b = Builder(PUBLIC_REPOSITORY, "Pln")
    for index, kind in enumerate(KINDS):
        minute = 9000 + 10 * index
        text = in_prose(kind)
        pr = b.pull_request(FIRST_PLANTED + index, minute, title=text, body=text)
        review = b.review(pr, "COMMENTED", BOB, minute - 5, body=text)
        comment = b.comment(pr, review, text, BOB, minute - 4)
        comment["diffHunk"] = "@@ -1,2 +1,3 @@\n+" + text.replace("\n", "\n+")
        pr["reviews"]["nodes"] = [review]
        pr["reviewThreads"]["nodes"] = [b.thread("deploy/config.yml", [comment])]
        pulls.append(pr)
    pr = b.pull_request(HIDDEN_PR, 9900, title=f"Hidden {HIDDEN_TEXT}")
    review = b.review(pr, "COMMENTED", BOB, 9890)
    split = b.comment(pr, review, f"the log shows {SPLIT[:20]}\n{SPLIT[20:]} twice", BOB, 9891)
    pr["reviews"]["nodes"] = [review]
    pr["reviewThreads"]["nodes"] = [b.thread("src/app.py", [split])]
    pulls.append(pr)
    return corpus


def everything_under(project: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in sorted((project / ".theurian").rglob("*")) if p.is_file())


def assert_no_needle(data: bytes | str, where: str) -> None:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    found = [needle[:12] for needle in NEEDLES if needle in text]
    assert found == [], f"planted credentials (first characters shown) found in {where}"


def configure(project: Path, **review: Any) -> None:
    config = project / ".theurian/config.toml"
    lines = [f"{key} = {json.dumps(value)}" for key, value in review.items()]
    text = config.read_text(encoding="utf-8").replace("allowlist = [", "\n".join(lines) + "\nallowlist = [", 1)
    config.write_text(text, encoding="utf-8")


def planted_small_corpus() -> dict[str, Any]:
    """The small corpus (`small_corpus`) with the planted pull requests added (`planted_corpus`)."""
    return planted_corpus(small_corpus(load_fixture()))


def salted_template(installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project (`new_project`) with the public repository allowlisted and its salt made, never ingested: every
    copy keys fingerprints and pseudonyms alike."""
    project = new_project(installation, tmp_path_factory.mktemp("template") / "p", PUBLIC_REPOSITORY)
    project_salt(project)
    return project
