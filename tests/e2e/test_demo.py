"""`make demo`'s script end to end (installation aside, which `make` does first): every stage through the real CLI
on bundled data, then a real MCP client's answers from the daemon it started."""

import os
import subprocess
from pathlib import Path

from tests.support.daemon import free_port

REPO = Path(__file__).resolve().parents[2]


def test_the_demo_builds_every_store_from_bundled_data_and_a_real_client_gets_answers(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_", "THEURIAN_"))}
    env |= {"THEURIAN_DEMO_DIR": str(tmp_path / "demo"), "THEURIAN_DEMO_PORT": str(free_port()),
            "THEURIAN_DEMO_NO_SERVE": "1"}
    result = subprocess.run(["bash", "scripts/demo.sh"], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Acme/Widgets: completed — 105 pull requests" in output
    assert "> review.search" in output and "slow reads hold it" in output
    assert "> review.findings" in output and "count 2" in output
    assert "> knowledge.search" in output and "refused" not in output
    assert '"reviewIngestion": true' in output
    assert "theurian daemon stopped" in output  # the script stopped the daemon it started
    state = tmp_path / "demo/sample-project/.theurian/state"
    assert (state / "review-store.duckdb").is_file() and (state / "theurian-findings-local.sqlite").is_file()
