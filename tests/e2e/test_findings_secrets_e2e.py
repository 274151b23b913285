"""A secret in a `Review-Finding:` trailer meets the project's `[review] secrets` policy at `findings build`, as a
fetched record meets it at ingest: redacted with the lake's marker by default (the CLI's list and review.findings
through the SDK client serve the marker, never the value), left out under `block`, kept under `warn`, not scanned
under `off`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from evidence.content_policy import project_salt
from projection.findings_build import build_findings_store
from projection.findings_store import FindingFilter, read_findings
from tests.projection.git_fixture import T0, Planned, message, trailer, write_history
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import call_tools
from theurian.secret_scan import fingerprint, marker

TOKEN = "ghp_Q7vT2mX9pL4kR8sW1nB6yH3cJ5dF0gA2eZ7u"
HISTORY = (
    Planned(T0, message("log less", [trailer("security", "HIGH", f"token leaked {TOKEN} in logs"),
                                     trailer("code", "LOW", "rename the helper")])),
)


def _project(root: Path, installation: Installation, project_id: str, policy: str | None = None) -> Path:
    write_history(root, HISTORY)
    installation.new_project_in_process(root, project_id)
    if policy is not None:
        config = root / ".theurian/config.toml"
        config.write_text(config.read_text(encoding="utf-8") + f'secrets = "{policy}"\n', encoding="utf-8")
    return root


def test_findings_build_redacts_a_secret_in_a_trailer_and_no_surface_serves_it(
        module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path) -> None:
    root = _project(tmp_path / "leaky", module_installation, "leaky")
    built = module_installation.cli("findings", "build", "--project", str(root), check=True)
    assert built.stdout.strip().endswith(
        "; secrets (policy redact): 1 found in 1 findings, which was redacted")
    shown = marker("github-token", fingerprint(project_salt(root), TOKEN))
    listed = [module_installation.cli("findings", "list", *flags, "--project", str(root), check=True).stdout
              for flags in ((), ("--json",), ("--csv",))]
    assert all(TOKEN not in out for out in listed)
    rows = json.loads(listed[1])["summary"]["findings"]
    assert [row["findingText"] for row in rows if row["reviewer"] == "security"] == [
        f"token leaked {shown} in logs"]
    answer = call_tools(module_daemon.mcp_url, [("review.findings", {"projectId": "leaky", "q": "leaked"})])[0]
    assert TOKEN not in answer.text
    served = answer.valid("review-findings-response.schema.json")["findings"]
    assert [row["findingText"] for row in served] == [f"token leaked {shown} in logs"]


@pytest.mark.parametrize(("policy", "texts"), [
    ("block", ["rename the helper"]),
    ("warn", [f"token leaked {TOKEN} in logs", "rename the helper"]),
    ("off", [f"token leaked {TOKEN} in logs", "rename the helper"]),
])
def test_block_leaves_the_finding_out_and_warn_and_off_keep_it_as_written(
        installation: Installation, tmp_path: Path, policy: str, texts: list[str]) -> None:
    root = _project(tmp_path / policy, installation, policy, policy)
    summary = build_findings_store(root)
    assert summary.findings == len(texts)
    assert sorted(row.finding_text for row in read_findings(root, FindingFilter(), 10)) == sorted(texts)
    said = summary.describe()
    if policy == "off":
        assert "secrets" not in said
    else:
        done = "left out" if policy == "block" else "kept as written"
        assert said.endswith(f"; secrets (policy {policy}): 1 found in 1 findings, which was {done}")


@pytest.mark.parametrize(("policy", "action"), [
    ("redact", "redacted"), ("block", "blocked"), ("warn", "warned"), ("off", None)])
def test_findings_build_json_accounts_for_secrets_with_the_names_of_an_ingest_s_account(
        installation: Installation, tmp_path: Path, policy: str, action: str | None) -> None:
    root = _project(tmp_path / policy, installation, policy, policy)
    sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                         check=True).stdout.strip()
    built = installation.cli("findings", "build", "--project", str(root), "--json", check=True)
    assert TOKEN not in built.stdout + built.stderr
    secrets = json.loads(built.stdout)["summary"]["secrets"]
    if action is None:  # not scanned: nothing found, as an ingest under "off" reports
        assert secrets == {"policy": "off", "findings": {}, "records": []}
        return
    print_ = fingerprint(project_salt(root), TOKEN)
    assert secrets == {"policy": policy, "findings": {"github-token": 1}, "records": [
        {"commitSha": sha, "position": 0, "action": action,
         "fields": [{"field": "findingText", "type": "github-token", "fingerprint": print_}]}]}
