"""`theurian doctor` on a fresh installation: a check that cannot run is one FAIL row with its cure, and every
other row is still printed."""

from __future__ import annotations

import json

from ingest.api_url import API_URL_ENV
from tests.support.installation import Installation


def test_online_with_an_api_url_the_client_refuses_fails_the_github_api_row_and_prints_every_other_row(
        installation: Installation) -> None:
    """`api_url_from` ran outside the check's `try`: its refusal stopped doctor, printing no row at all."""
    env = {"GITHUB_TOKEN": "test-token", API_URL_ENV: "http://ghe.example/api/v3"}
    result = installation.cli("doctor", "--json", "--online", extra_env=env, timeout=120)
    document = json.loads(result.stdout)
    assert (result.returncode, document["ok"], result.stderr) == (1, False, "")
    checks = {c["check"]: c for c in document["summary"]["checks"]}
    assert {"python", "git", "project registry", "daemon", "github token"} <= set(checks)
    api = checks["github api"]
    assert api["level"] == "fail"
    assert api["state"].startswith(f"{API_URL_ENV} 'http://ghe.example/api/v3' is plain http to a host that is not "
                                   "loopback")
    assert api["cure"] == (f"set {API_URL_ENV} to an https:// URL (GitHub Enterprise: https://HOST/api/v3), or unset "
                           "it for https://api.github.com")
    table = installation.cli("doctor", "--online", extra_env=env, timeout=120)
    assert table.returncode == 1 and table.stderr == ""
    [row] = [line for line in table.stdout.splitlines() if " github api " in line]
    assert row.startswith("FAIL  github api ") and row.endswith(f"  -> {api['cure']}")
    assert table.stdout.rstrip().endswith("check(s) failed")
