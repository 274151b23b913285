"""The official MCP conformance scenarios (`@modelcontextprotocol/conformance`, server side) against a real daemon,
on both routes: every scenario passes except those scripts/conformance/expected-failures.yml names, each with the
capability it needs that this server does not offer. A failure not named there, or a named one that now passes,
fails the run."""

import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.daemon import RunningDaemon
from tests.support.token_proxy import token_proxy

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / ".tools/conformance/node_modules"
NODE = TOOLS / "node/bin/node"  # the Node >= 22 the lock pins, whatever node is on the PATH
CONFORMANCE = TOOLS / ".bin/conformance"
EXPECTED_FAILURES = REPO / "scripts/conformance/expected-failures.yml"


def test_every_expected_failure_names_its_reason() -> None:
    baseline = yaml.safe_load(EXPECTED_FAILURES.read_text(encoding="utf-8"))
    assert sorted(baseline["server"]) == sorted(baseline["reasons"])
    assert all(isinstance(why, str) and why.strip() for why in baseline["reasons"].values())


@pytest.mark.parametrize("route", ["mcp_url", "compat_url"])
def test_the_conformance_scenarios_pass_but_the_expected_failures(
    module_daemon: RunningDaemon, route: str, tmp_path: Path
) -> None:
    if not CONFORMANCE.exists():
        pytest.fail("the conformance suite is not installed: run `make conformance` (make test does it)")
    # The suite's CLI sends no header of its own: a loopback forwarder adds the daemon's token to each request.
    with token_proxy(getattr(module_daemon, route), module_daemon.token) as url:
        result = subprocess.run(
            [str(NODE), str(CONFORMANCE), "server", "--url", url,
             "--expected-failures", str(EXPECTED_FAILURES), "--output-dir", str(tmp_path)],
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
        )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "Baseline check passed: all failures are expected." in result.stdout
    for scenario in ("server-initialize", "tools-list", "ping", "dns-rebinding-protection"):
        assert f"✓ {scenario}:" in result.stdout
